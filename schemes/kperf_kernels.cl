// kperf tile contract, part 4: the pipelined tile and the kernel macros every app instantiates.
// Included by kperf_tile.cl, after the contract and the tile fill; not built alone.
#ifndef KPERF_KPERF_KERNELS_CL
#define KPERF_KPERF_KERNELS_CL

// Experimental pipelined tile (-DKPERF_PIPELINE_BLOCKS=N): each work-group computes N blocks
// down a column, in turn, with two tiles; the global loads of block b + 1 are issued into
// registers before block b is computed, so they are in flight during its arithmetic. The host
// launches the usual grid and groups past the first 1/N of each column exit at once. Supported:
// local float tiles in the aligned float4 layout, accurate or fused rows:k with PY % SKIP == 0,
// no output scheme; anything else does not build.
#ifndef KPERF_PIPELINE_BLOCKS
#define KPERF_PIPELINE_BLOCKS 1
#endif
#if KPERF_PIPELINE_BLOCKS > 1
#if !(KPERF_VEC_ROWS && KPERF_LOAD_TILE && KPERF_LOAD_BUFFER && VEC == 4 && OUT_KY == 1 && \
      OUT_KX == 1 && KPERF_IN_BYTES == 4 && (defined(KPERF_SCHEME_IS_ACCURATE) ||           \
                                            (defined(KPERF_FUSED_ROWS) && PY % SKIP == 0)))
#error "KPERF_PIPELINE_BLOCKS: local f32 float4 tiles, accurate or fused rows:k (PY % SKIP == 0)"
#endif
#ifndef KPERF_PIPE_TILES
#define KPERF_PIPE_TILES 2  // 1: one tile and a second barrier per block (half the local memory)
#endif
#ifdef KPERF_SCHEME_IS_ACCURATE
#define KPERF_PIPE_STEP 1
#else
#define KPERF_PIPE_STEP SKIP  // whole periods per block: tile row 0 is kept in every block
#endif
#define KPERF_PIPE_ROWS ((TILE_H + KPERF_PIPE_STEP - 1) / KPERF_PIPE_STEP)
#define KPERF_PIPE_ITERS ((KPERF_PIPE_ROWS * TILE_CHUNKS + WG_SIZE - 1) / WG_SIZE)

// Issues this work-item's share of block `by`'s tile loads (clamped to the grid).
inline void kperf_pipe_stage(float4* staged, __global const float* in, int width, int height,
                             int by) {
  const int lid = kperf_local_linear_id();
  const int gy0 = by * BLOCK_Y - RADIUS;
  const int xa = (int)get_group_id(0) * BLOCK_X - 4;
  const bool inside = (width & 3) == 0 && xa >= 0 && xa + TILE_STRIDE <= width;
#pragma unroll
  for (int k = 0; k < KPERF_PIPE_ITERS; ++k) {
    const int i = lid + k * WG_SIZE;
    if (i < KPERF_PIPE_ROWS * TILE_CHUNKS) {
      const int j = KPERF_UDIV(i, TILE_CHUNKS);
      const int c = i - j * TILE_CHUNKS;
      const int gy = clamp(gy0 + j * KPERF_PIPE_STEP, 0, height - 1);
      if (inside) {
        staged[k] = ((__global const float4*)in)[KPERF_UDIV(gy * width + xa, 4) + c];
      } else {
        const int x = xa + 4 * c;
        staged[k] = (float4)(in[gy * width + clamp(x, 0, width - 1)],
                             in[gy * width + clamp(x + 1, 0, width - 1)],
                             in[gy * width + clamp(x + 2, 0, width - 1)],
                             in[gy * width + clamp(x + 3, 0, width - 1)]);
      }
    }
  }
}

inline void kperf_pipe_commit(const float4* staged, __local float* tile) {
  const int lid = kperf_local_linear_id();
#pragma unroll
  for (int k = 0; k < KPERF_PIPE_ITERS; ++k) {
    const int i = lid + k * WG_SIZE;
    if (i < KPERF_PIPE_ROWS * TILE_CHUNKS) {
      const int j = KPERF_UDIV(i, TILE_CHUNKS);
      ((__local float4*)tile)[j * KPERF_PIPE_STEP * TILE_CHUNKS + (i - j * TILE_CHUNKS)] = staged[k];
    }
  }
}

#define KPERF_IMAGE_KERNEL_BLOCK(block_fn)                                                  \
  __kernel KPERF_WG_ATTR void kperf_app(__global const float* in, __global float* out,     \
                                        int width, int height) {                           \
    __local float tiles[KPERF_PIPE_TILES][TILE_ELEMS] __attribute__((aligned(16)));        \
    const int groups_y = (height + BLOCK_Y - 1) / BLOCK_Y;                                 \
    const int first = (int)get_group_id(1) * KPERF_PIPELINE_BLOCKS;                        \
    if (first >= groups_y) return; /* the whole group: no barrier is left waiting */       \
    const int n = min(KPERF_PIPELINE_BLOCKS, groups_y - first);                            \
    float4 staged[KPERF_PIPE_ITERS];                                                       \
    kperf_pipe_stage(staged, in, width, height, first);                                    \
    for (int b = 0; b < n; ++b) {                                                          \
      __local float* tile = tiles[b % KPERF_PIPE_TILES];                                   \
      if (KPERF_PIPE_TILES == 1 && b > 0) barrier(CLK_LOCAL_MEM_FENCE); /* reads of b-1 */ \
      kperf_pipe_commit(staged, tile);                                                     \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
      if (b + 1 < n) kperf_pipe_stage(staged, in, width, height, first + b + 1);           \
      float win[KPERF_WIN_H * KPERF_WIN_W];                                                \
      kperf_gather_window(tile, win, kperf_item_row(0), kperf_item_col(0));                \
      float result[PY * VEC];                                                              \
      KPERF_COMPUTE(block_fn, win, result);                                                \
      kperf_store_at(out, width, height, (first + b) * BLOCK_Y + (int)get_local_id(1) * PY, \
                     (int)get_group_id(0) * BLOCK_X + (int)get_local_id(0) * VEC, result);   \
    }                                                                                      \
  }
#else
// The kernel of an image app: gather each work-item's window by the selected load path and
// scheme, compute its PY x VEC outputs with block_fn(const float* win, float* result)
// (row-major result), store them by the selected output scheme. Padded work-items join the
// barriers and write nothing. Every app kernel is named kperf_app so the host needs no per-app
// names.
#define KPERF_IMAGE_KERNEL_BLOCK(block_fn)                                                \
  __kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out, \
                                        int width, int height) {                         \
    KPERF_BODY(block_fn, in, out, width, height);                                        \
  }
#endif  // KPERF_PIPELINE_BLOCKS

// The same for an app defined one output at a time: point_fn(const float* c), c pointing at
// the output's own element of the window.
#define KPERF_IMAGE_KERNEL(point_fn)                                                        \
  inline void point_fn##_block(const float* win, float* result) {                          \
    _Pragma("unroll") for (int p = 0; p < PY; ++p)                                         \
    _Pragma("unroll") for (int v = 0; v < VEC; ++v) result[p * VEC + v] =                  \
        point_fn(&win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v]);                           \
  }                                                                                        \
  KPERF_IMAGE_KERNEL_BLOCK(point_fn##_block)

// An app whose window rows each go through one linear row pass before a column pass (separable
// filters, Sobel's two passes) is declared with KPERF_IMAGE_KERNEL_ROWS(row_fn, col_fn, values):
// row_fn(const float* row, float* h) maps one window row (KPERF_WIN_W elements) to `values`
// numbers; col_fn(const float* h, float* result) combines the KPERF_WIN_H rows' numbers (row r's
// at h + r * values) into the PY x VEC outputs. Under rows:k with compile-time row sources, only
// kept rows are passed: an nn row takes its kept row's numbers, an li row the interpolation of
// its kept rows' numbers (the pass is linear; the outputs differ by float rounding only). So li
// costs nn's work plus one mad per number, and nn on the global load path no longer repeats the
// pass on rows it reads again (the compiler merges those on the local tile, not from global
// memory). -DKPERF_RECON_AFTER_ROW_PASS=0 rebuilds the window first, for comparison
// (-DKPERF_LI_AFTER_ROW_PASS=0, its earlier name, still works).
#if !defined(KPERF_RECON_AFTER_ROW_PASS) && defined(KPERF_LI_AFTER_ROW_PASS)
#define KPERF_RECON_AFTER_ROW_PASS KPERF_LI_AFTER_ROW_PASS
#endif
#ifndef KPERF_RECON_AFTER_ROW_PASS
#if defined(KPERF_FUSED_ROWS) && OUT_KY == 1 && OUT_KX == 1 && PY % SKIP == 0 && \
    !KPERF_PROBE_LOADS_ONLY && KPERF_PIPELINE_BLOCKS == 1
#define KPERF_RECON_AFTER_ROW_PASS 1
#else
#define KPERF_RECON_AFTER_ROW_PASS 0
#endif
#endif
#if KPERF_RECON_AFTER_ROW_PASS
// Kept window rows are passed, and the one below the window where the last rows may take it
// (li: the tile has KPERF_TILE_EXTRA_ROWS for it; nn past the tile reads its last row instead;
// either way the value is selected away past the tile's last kept row, as in the gather).
#if KPERF_LOAD_TILE
#define KPERF_KEPT_ROW(t, col0, row) \
  kperf_tile_row(kperf_tile, min(t, TILE_H + KPERF_TILE_EXTRA_ROWS - 1), col0, row)
#else
#define KPERF_KEPT_ROW(t, col0, row) kperf_global_row(in, width, height, t, col0, row)
#endif
// Rows a window row can take its numbers from: rows:2 nn takes the kept row above only.
#define KPERF_PASSED_ROWS (KPERF_WIN_H + (RECON_LI || SKIP > 2 ? SKIP - 1 : 0))
// Fills the numbers of every window row that is not kept (h holds `values` per row, kept rows'
// already passed) from its kept rows, by the fused gather's compile-time sources.
inline void kperf_rows_from_kept(float* h, int values, int row0) {
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    if (dy % SKIP == 0) continue;
    int above, below, mix;
    float w;
    kperf_window_row_source(row0, dy, &above, &below, &w, &mix);
    const int kept = dy - dy % SKIP;  // the kept row at or above it
#pragma unroll
    for (int k = 0; k < values; ++k) {
      const float a = h[kept * values + k];
#if RECON_LI
      const float mixed = mad(w, h[(kept + SKIP) * values + k] - a, a);
      h[dy * values + k] = mix ? mixed : a;
#elif SKIP > 2
      h[dy * values + k] = above == row0 + kept ? a : h[(kept + SKIP) * values + k];
#else
      h[dy * values + k] = a;
#endif
    }
  }
}
#define KPERF_IMAGE_KERNEL_ROWS(row_fn, col_fn, values)                                        \
  __kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out,      \
                                        int width, int height) {                              \
    KPERF_TILE_FILL(in, width, height);                                                       \
    const int row0 = kperf_item_row(0), col0 = kperf_item_col(0);                             \
    float h[KPERF_PASSED_ROWS * (values)];                                                    \
    _Pragma("unroll") for (int dy = 0; dy < KPERF_PASSED_ROWS; dy += SKIP) {                  \
      float row[KPERF_WIN_W];                                                                 \
      KPERF_KEPT_ROW(row0 + dy, col0, row);                                                   \
      row_fn(row, &h[dy * (values)]);                                                         \
    }                                                                                         \
    kperf_rows_from_kept(h, (values), row0);                                                 \
    float result[PY * VEC];                                                                   \
    col_fn(h, result);                                                                        \
    KPERF_STORE(out, width, height, result);                                                  \
  }
#else
#define KPERF_IMAGE_KERNEL_ROWS(row_fn, col_fn, values)                \
  inline void row_fn##_block(const float* win, float* result) {       \
    float h[KPERF_WIN_H * (values)];                                   \
    _Pragma("unroll") for (int r = 0; r < KPERF_WIN_H; ++r)            \
      row_fn(&win[r * KPERF_WIN_W], &h[r * (values)]);                 \
    col_fn(h, result);                                                 \
  }                                                                    \
  KPERF_IMAGE_KERNEL_BLOCK(row_fn##_block)
#endif

#endif  // KPERF_KPERF_KERNELS_CL
