// kperf tile contract, part 3: computing and storing outputs (vector stores), the output
// schemes' computed windows (fused and shared fills) and a work-item's body.
// Included by kperf_tile.cl, after the contract and the tile fill; not built alone.
#ifndef KPERF_KPERF_OUTPUTS_CL
#define KPERF_KPERF_OUTPUTS_CL

// The window of the computed output whose first window element is element (row0, col0) of this
// group's tile. Where it lies outside the block (a neighbouring block's computed line that the
// fused fill needs) and the tile depends on the group, it is read from global memory as the
// neighbouring group reads it, so that the value equals the one that group computes.
#define KPERF_BLOCK_STEP(c, n) ((c) < 0 ? -1 : (c) >= (n))
#define KPERF_IN_BLOCK(c, n) ((c) - KPERF_BLOCK_STEP(c, n) * (n))
#if KPERF_FRAME_FREE && KPERF_LOAD_TILE
// Columns left of the tile's own sit in its padding where the rows were loaded as aligned vectors.
#define KPERF_OUTPUT_WINDOW(win, in, width, height, row0, col0)                                 \
  if ((col0) >= 0 || ((col0) >= -TILE_OFF && kperf_rows_vectorizable(width)))                   \
    kperf_gather_window(kperf_tile, win, row0, col0);                                           \
  else                                                                                          \
    kperf_gather_window_global(in, width, height, win, (int)get_group_id(1), (int)get_group_id(0), \
                               row0, col0)
#elif KPERF_FRAME_FREE
#define KPERF_OUTPUT_WINDOW(win, in, width, height, row0, col0)                                 \
  kperf_gather_window_global(in, width, height, win, (int)get_group_id(1), (int)get_group_id(0), \
                             row0, col0)
#elif KPERF_LOAD_TILE
#define KPERF_OUTPUT_WINDOW(win, in, width, height, row0, col0)                                  \
  if ((row0) < BLOCK_Y && (col0) >= 0 && (col0) < BLOCK_X)                                     \
    kperf_gather_window(kperf_tile, win, row0, col0);                                            \
  else                                                                                           \
    kperf_gather_window_global(in, width, height, win,                                           \
                               (int)get_group_id(1) + KPERF_BLOCK_STEP(row0, BLOCK_Y),           \
                               (int)get_group_id(0) + KPERF_BLOCK_STEP(col0, BLOCK_X),           \
                               KPERF_IN_BLOCK(row0, BLOCK_Y), KPERF_IN_BLOCK(col0, BLOCK_X))
#else
#define KPERF_OUTPUT_WINDOW(win, in, width, height, row0, col0)                                \
  kperf_gather_window_global(in, width, height, win,                                           \
                             (int)get_group_id(1) + KPERF_BLOCK_STEP(row0, BLOCK_Y),           \
                             (int)get_group_id(0) + KPERF_BLOCK_STEP(col0, BLOCK_X),           \
                             KPERF_IN_BLOCK(row0, BLOCK_Y), KPERF_IN_BLOCK(col0, BLOCK_X))
#endif

// KPERF_PROBE_LOADS_ONLY: each output is its own window element.
inline void kperf_probe_centres(const float* win, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) result[p * VEC + v] = win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v];
}
// How an app's block function is called: block_fn(win, result) for image apps; an app that needs
// more (hotspot: its power grid at the outputs' coordinates) defines KPERF_CALL before including
// this file. (y0, x0) are the global coordinates of the first of the PY x VEC outputs; they may
// lie outside the grid (the fused output fill computes the column left of the grid, never
// stored), so reads at them are guarded or clamped.
#ifndef KPERF_CALL
#define KPERF_CALL(block_fn, win, result, y0, x0) block_fn(win, result)
#endif
#if KPERF_PROBE_LOADS_ONLY
#define KPERF_COMPUTE_AT(block_fn, win, result, y0, x0) kperf_probe_centres(win, result)
#else
#define KPERF_COMPUTE_AT(block_fn, win, result, y0, x0) KPERF_CALL(block_fn, win, result, y0, x0)
#endif
#define KPERF_COMPUTE(block_fn, win, result) \
  KPERF_COMPUTE_AT(block_fn, win, result, kperf_out_y0(), kperf_out_x0())

// Writes PY x VEC outputs whose first is (y0, x0) (float4 stores where the rows allow them).
inline void kperf_store_at(__global KPERF_OUT_T* out, int width, int height, int y0, int x0,
                           const float* values) {
#if VEC == 4 || VEC == 8
  // A block wholly inside the grid (most of them): one aligned store per row and no per-row
  // test, which a small kernel pays for in issue slots.
  if (width % VEC == 0 && x0 + VEC <= width && y0 + PY <= height) {
    const int i0 = KPERF_UDIV(y0 * width + x0, VEC), row_step = KPERF_UDIV(width, VEC);
#pragma unroll
    for (int p = 0; p < PY; ++p) {
#if VEC == 4
      kperf_write_out4(out, i0 + p * row_step, vload4(p, values));
#else
      kperf_write_out8(out, i0 + p * row_step, vload8(p, values));
#endif
    }
    return;
  }
#endif
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    const int y = y0 + p;
    if (y >= height) return;
#if VEC == 4
    if ((width & 3) == 0 && x0 + 3 < width) {
      kperf_write_out4(out, KPERF_UDIV(y * width + x0, 4), vload4(p, values));
      continue;
    }
#elif VEC == 8
    if ((width & 7) == 0 && x0 + 7 < width) {
      kperf_write_out8(out, KPERF_UDIV(y * width + x0, 8), vload8(p, values));
      continue;
    }
#endif
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      if (x0 + v < width) kperf_write_out(out, y * width + x0 + v, values[p * VEC + v]);
  }
}

inline void kperf_store(__global KPERF_OUT_T* out, int width, int height, const float* values) {
  kperf_store_at(out, width, height, kperf_out_y0(), kperf_out_x0(), values);
}

#include KPERF_STR(KPERF_OUTPUT_FILE)

// Under an output scheme a work-item computes KPERF_OUT_CQY x KPERF_OUT_CQX computed outputs, the
// first of them KPERF_OUT_ITEM_PREV_X columns left of its own first, and KPERF_OUT_FINISH writes
// its outputs from them. The fused and separate fills compute every computed output they store
// from (KPERF_OUT_NQY x KPERF_OUT_NQX) and store at once; the shared fill says otherwise.
#ifndef KPERF_OUT_CQY
#define KPERF_OUT_CQY KPERF_OUT_NQY
#define KPERF_OUT_CQX KPERF_OUT_NQX
#define KPERF_OUT_ITEM_PREV_X KPERF_OUT_PREV_X
#define KPERF_OUT_FINISH(block_fn, in, out, width, height, vals) \
  kperf_output_store(out, width, height, vals)
#endif

// Under an output scheme along x on a tile that does not depend on the group (KPERF_FRAME_FREE:
// the accurate input), a work-item's computed columns share one window, KPERF_X_WIN_W wide (their
// windows, OUT_KX apart, side by side), gathered once; each computed output's window is a slice
// of it. The slices hold the values their own gathers would (so the outputs do not change), the
// loads that neighbouring windows share are issued once, and an app whose first stage works per
// window column (median's column sorts) computes a shared column once: after unrolling the
// slices are the same values, and the compiler merges the same operations on them.
// -DKPERF_SHARED_X_WINDOW=0 gathers each window on its own, for comparison.
#ifndef KPERF_SHARED_X_WINDOW
#define KPERF_SHARED_X_WINDOW (OUT_KX > 1 && KPERF_FRAME_FREE)
#endif
#if defined(KPERF_EXPECT_SHARED_X_WINDOW) && \
    KPERF_EXPECT_SHARED_X_WINDOW != KPERF_SHARED_X_WINDOW
#error "KPERF_SHARED_X_WINDOW is not the one expected (KPERF_EXPECT_SHARED_X_WINDOW, tests)"
#endif
#if KPERF_SHARED_X_WINDOW
#if !KPERF_FRAME_FREE || defined(KPERF_FUSED_ROWS)
#error "KPERF_SHARED_X_WINDOW: only where every tile element holds its own value"
#endif
#define KPERF_X_WIN_W ((KPERF_OUT_CQX - 1) * OUT_KX + 1 + 2 * RADIUS)
// Its first column from the region's first (x0); its aligned 4-element chunks from there.
#define KPERF_X_WIN_OFF (OUT_KX / 2 - KPERF_OUT_ITEM_PREV_X * OUT_KX - RADIUS)
#define KPERF_FLOOR4(n) (((n) + 64) / 4 - 16)  // floor(n / 4) for n >= -64
#define KPERF_X_CHUNK0 KPERF_FLOOR4(KPERF_X_WIN_OFF)
#define KPERF_X_CHUNKS (KPERF_FLOOR4(KPERF_X_WIN_OFF + KPERF_X_WIN_W - 1) - KPERF_X_CHUNK0 + 1)

// The shared window of computed row qy's outputs, whose first element is tile element
// (row0, col0), from global memory: where the region's columns are aligned and every chunk lies
// inside the grid, as aligned 4-element loads (each row one address, constant offsets);
// otherwise element by element, clamped to the grid as every load path clamps.
inline void kperf_gather_x_window_global(KPERF_INPUT_PARAM in, int width, int height, float* win,
                                         int row0, int col0) {
  const int gy0 = kperf_tile_origin_y();
  const int gx0 = kperf_tile_origin_x() + col0;
#if KPERF_COLS_OWN_SOURCE && KPERF_SRC_COLS_DIRECT && KPERF_LOAD_BUFFER && ITEM_COLS % 4 == 0
  const int x0 = kperf_out_x0();
  if ((width & 3) == 0 && x0 + 4 * KPERF_X_CHUNK0 >= 0 &&
      x0 + 4 * (KPERF_X_CHUNK0 + KPERF_X_CHUNKS) <= width) {
#pragma unroll
    for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
      KPERF_INPUT_PARAM at = in + kperf_src_row(gy0 + row0 + dy, height) * width + x0;
      float chunks[4 * KPERF_X_CHUNKS];
#pragma unroll
      for (int ch = 0; ch < KPERF_X_CHUNKS; ++ch)
        vstore4(kperf_read_in4(at, KPERF_X_CHUNK0 + ch), ch, chunks);
#pragma unroll
      for (int dx = 0; dx < KPERF_X_WIN_W; ++dx)
        win[dy * KPERF_X_WIN_W + dx] = chunks[KPERF_X_WIN_OFF - 4 * KPERF_X_CHUNK0 + dx];
    }
    return;
  }
#endif
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy)
#pragma unroll
    for (int dx = 0; dx < KPERF_X_WIN_W; ++dx)
      win[dy * KPERF_X_WIN_W + dx] = kperf_load(in, width, height, gy0 + row0 + dy, gx0 + dx);
}

// The same window from the local tile where it lies there (as KPERF_OUTPUT_WINDOW decides for
// one computed output's window), else from global memory.
#if KPERF_LOAD_TILE
#define KPERF_X_WINDOW(win, in, width, height, row0, col0)                            \
  if ((col0) >= 0 || ((col0) >= -TILE_OFF && kperf_rows_vectorizable(width))) {       \
    _Pragma("unroll") for (int dy = 0; dy < KPERF_WIN_H; ++dy)                        \
    _Pragma("unroll") for (int dx = 0; dx < KPERF_X_WIN_W; ++dx)                      \
      (win)[dy * KPERF_X_WIN_W + dx] = TILE_AT(kperf_tile, (row0) + dy, (col0) + dx); \
  } else                                                                              \
    kperf_gather_x_window_global(in, width, height, win, row0, col0)
#else
#define KPERF_X_WINDOW(win, in, width, height, row0, col0) \
  kperf_gather_x_window_global(in, width, height, win, row0, col0)
#endif
#endif  // KPERF_SHARED_X_WINDOW

// Under an output scheme along y on the global load path and the accurate input, a work-item's
// computed rows share one window, KPERF_Y_WIN_H rows tall (their windows, OUT_KY apart, stacked),
// gathered once; each computed row's window is a slice of it. Where the windows overlap (rows:2
// at any radius, rows:3 from radius 2) the rows they share are loaded once, where they only touch
// one test decides the wide loads of all of them, and a separable app's row pass of a shared row
// runs once (the slices hold the same values; the compiler merges the same operations). One
// gather per window loads each shared row in each window: the tests that pick wide loads for
// a window sit between them, and the compiler merged neither the loads nor the passes (NVIDIA's
// PTX of gaussian3 rows:2 li, VEC 4, two computed rows: 9 row loads for 7 rows). Periods longer
// than the window would load the rows between windows, so those keep one gather per window.
// -DKPERF_SHARED_Y_WINDOW=0 gathers each window on its own, for comparison.
#ifndef KPERF_SHARED_Y_WINDOW
#define KPERF_SHARED_Y_WINDOW \
  (OUT_KY > 1 && OUT_KX == 1 && OUT_KY <= KPERF_WIN_H && KPERF_FRAME_FREE && !KPERF_LOAD_TILE)
#endif
#if defined(KPERF_EXPECT_SHARED_Y_WINDOW) && \
    KPERF_EXPECT_SHARED_Y_WINDOW != KPERF_SHARED_Y_WINDOW
#error "KPERF_SHARED_Y_WINDOW is not the one expected (KPERF_EXPECT_SHARED_Y_WINDOW, tests)"
#endif
#if KPERF_SHARED_Y_WINDOW
#if !KPERF_FRAME_FREE || defined(KPERF_FUSED_ROWS) || KPERF_LOAD_TILE || OUT_KX > 1
#error "KPERF_SHARED_Y_WINDOW: rows:K on the global load path, every element its own value"
#endif
#define KPERF_Y_WIN_H ((KPERF_OUT_CQY - 1) * OUT_KY + KPERF_WIN_H)

// The shared window of a work-item's computed rows, whose first element is tile element
// (row0, col0): each row one wide load (kperf_read_window_row) where the columns allow it, else
// element by element, clamped to the grid as every load path clamps; the same elements and
// sources as kperf_gather_window_global's windows.
inline void kperf_gather_y_window_global(KPERF_INPUT_PARAM in, int width, int height, float* win,
                                         int row0, int col0) {
  const int gy0 = kperf_tile_origin_y() + row0;
  const int gx0 = kperf_tile_origin_x() + col0;
#if KPERF_GLOBAL_VEC_ROWS
  if (kperf_wide_row_inside(width, gx0 + RADIUS)) {
#pragma unroll
    for (int dy = 0; dy < KPERF_Y_WIN_H; ++dy)
      kperf_read_window_row(in, kperf_src_row(gy0 + dy, height) * width + gx0 + RADIUS,
                            &win[dy * KPERF_WIN_W]);
    return;
  }
#endif
#pragma unroll
  for (int dy = 0; dy < KPERF_Y_WIN_H; ++dy)
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx)
      win[dy * KPERF_WIN_W + dx] = kperf_load(in, width, height, gy0 + dy, gx0 + dx);
}
#endif  // KPERF_SHARED_Y_WINDOW

// A work-item's work: gather its window(s), compute, store by the output scheme.
#if OUT_KY == 1 && OUT_KX == 1
#define KPERF_BODY(block_fn, in, out, width, height)                             \
  float win[KPERF_WIN_H * KPERF_WIN_W];                                          \
  KPERF_GATHER(win, in, width, height);                                          \
  float result[PY * VEC];                                                        \
  KPERF_COMPUTE_AT(block_fn, win, result, kperf_out_y0(), kperf_out_x0());      \
  KPERF_STORE(out, width, height, result)
#else
// Under an output scheme: KPERF_OUT_CQY x KPERF_OUT_CQX computed outputs (each PY x VEC, one of
// them along the scheme's axis) one period apart, then the fill file's KPERF_OUT_FINISH writes
// what this work-item owns.
#define KPERF_OUT_POINT (PY * VEC)
#define KPERF_OUT_VAL_AT(vals, qy, qx) (&(vals)[((qy) * KPERF_OUT_CQX + (qx)) * KPERF_OUT_POINT])
// The PY x VEC computed outputs whose window starts at element (row0, col0) of this group's tile,
// into result.
#define KPERF_OUT_COMPUTE_AT(block_fn, in, width, height, result, row0, col0)               \
  {                                                                                         \
    float win[KPERF_WIN_H * KPERF_WIN_W];                                                   \
    KPERF_OUTPUT_WINDOW(win, in, width, height, row0, col0);                                \
    KPERF_COMPUTE_AT(block_fn, win, result, kperf_block_y0() + (row0),                       \
                     kperf_block_x0() + (col0));                                            \
  }
// The computed output (qy, qx) of this work-item into its slot of vals.
#define KPERF_OUT_COMPUTE(block_fn, in, width, height, vals, qy, qx)                         \
  KPERF_OUT_COMPUTE_AT(block_fn, in, width, height, KPERF_OUT_VAL_AT(vals, qy, qx),          \
                       kperf_item_row(qy), kperf_item_col((qx) - KPERF_OUT_ITEM_PREV_X))
// Computed row qy's outputs (KPERF_OUT_CQX of them, one per computed column) into vals.
#if KPERF_SHARED_X_WINDOW
// From one shared window: each computed column's window is its slice.
#define KPERF_OUT_COMPUTE_ROW(block_fn, in, width, height, vals, qy)                          \
  {                                                                                           \
    const int row0 = kperf_item_row(qy), col0 = kperf_item_col(-KPERF_OUT_ITEM_PREV_X);       \
    float shared_win[KPERF_WIN_H * KPERF_X_WIN_W];                                            \
    KPERF_X_WINDOW(shared_win, in, width, height, row0, col0);                                \
    _Pragma("unroll") for (int qx = 0; qx < KPERF_OUT_CQX; ++qx) {                            \
      float win[KPERF_WIN_H * KPERF_WIN_W];                                                   \
      _Pragma("unroll") for (int dy = 0; dy < KPERF_WIN_H; ++dy)                              \
      _Pragma("unroll") for (int dx = 0; dx < KPERF_WIN_W; ++dx)                              \
        win[dy * KPERF_WIN_W + dx] = shared_win[dy * KPERF_X_WIN_W + qx * OUT_KX + dx];        \
      KPERF_COMPUTE_AT(block_fn, win, KPERF_OUT_VAL_AT(vals, qy, qx),                         \
                       kperf_block_y0() + row0,                                               \
                       kperf_block_x0() + col0 + qx * OUT_KX);                                \
    }                                                                                         \
  }
#else
#define KPERF_OUT_COMPUTE_ROW(block_fn, in, width, height, vals, qy) \
  _Pragma("unroll") for (int qx = 0; qx < KPERF_OUT_CQX; ++qx)       \
    KPERF_OUT_COMPUTE(block_fn, in, width, height, vals, qy, qx)
#endif
// Every computed row's outputs into vals.
#if KPERF_SHARED_Y_WINDOW
// From one shared window: each computed row's window is its slice.
#define KPERF_OUT_COMPUTE_ROWS(block_fn, in, width, height, vals)                             \
  {                                                                                           \
    const int row0 = kperf_item_row(0), col0 = kperf_item_col(0);                            \
    float shared_win[KPERF_Y_WIN_H * KPERF_WIN_W];                                            \
    kperf_gather_y_window_global(in, width, height, shared_win, row0, col0);                  \
    _Pragma("unroll") for (int qy = 0; qy < KPERF_OUT_CQY; ++qy) {                            \
      float win[KPERF_WIN_H * KPERF_WIN_W];                                                   \
      _Pragma("unroll") for (int i = 0; i < KPERF_WIN_H * KPERF_WIN_W; ++i)                   \
        win[i] = shared_win[qy * OUT_KY * KPERF_WIN_W + i];                                   \
      KPERF_COMPUTE_AT(block_fn, win, KPERF_OUT_VAL_AT(vals, qy, 0),                          \
                       kperf_block_y0() + row0 + qy * OUT_KY, kperf_block_x0() + col0);       \
    }                                                                                         \
  }
#else
#define KPERF_OUT_COMPUTE_ROWS(block_fn, in, width, height, vals) \
  _Pragma("unroll") for (int qy = 0; qy < KPERF_OUT_CQY; ++qy)    \
    KPERF_OUT_COMPUTE_ROW(block_fn, in, width, height, vals, qy)
#endif
#define KPERF_BODY(block_fn, in, out, width, height)                       \
  KPERF_TILE_FILL(in, width, height);                                      \
  float kperf_vals[KPERF_OUT_CQY * KPERF_OUT_CQX * KPERF_OUT_POINT];       \
  KPERF_OUT_COMPUTE_ROWS(block_fn, in, width, height, kperf_vals);         \
  KPERF_OUT_FINISH(block_fn, in, out, width, height, kperf_vals)
#endif

#endif  // KPERF_KPERF_OUTPUTS_CL
