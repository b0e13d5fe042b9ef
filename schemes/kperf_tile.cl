// kperf tile contract: geometry shared by every app kernel and every perforation scheme.
//
// A work-group of WG_X x WG_Y work-items computes a BLOCK_X x BLOCK_Y block of outputs
// (BLOCK_X = WG_X * VEC, BLOCK_Y = WG_Y * PY: each work-item computes VEC consecutive outputs
// along x in each of PY consecutive rows) from a local
// tile of TILE_H x TILE_W floats whose element (ty, tx) stands for the global element
// (group_y * BLOCK_Y + ty - RADIUS, group_x * BLOCK_X + tx - RADIUS), clamped to the grid.
// Five files, each chosen by a -D option, plug into this contract:
// - the storage precision (KPERF_PRECISION_FILE: precision_f32.cl, _f16in.cl, _f16.cl) says how
//   input and output elements are stored in global memory (float, or half through vload_half);
// - where perforation happens (KPERF_PERFORATE_FILE: perforate_device.cl, perforate_host.cl)
//   maps grid coordinates to places in the input buffer (the whole grid, or the kept lines the
//   host packed);
// - the load path (KPERF_LOAD_FILE: load_local.cl, load_global.cl, load_image.cl) says what the
//   input argument is, how one element is read and whether windows come from a local tile;
// - the input scheme (KPERF_SCHEME_FILE) defines kperf_fill_tile(), which loads the elements the
//   scheme keeps and rebuilds the others in local memory, and the row/column source functions
//   that say where each tile element's value comes from (the global load path reads those);
// - the output scheme (KPERF_OUTPUT_FILE: output_none.cl, output_grid.cl) stores the outputs,
//   computing one line in OUT_KY (rows) / OUT_KX (columns); its fill kernel rebuilds the rest.
// Every macro has a default so each file compiles alone.
#ifndef KPERF_TILE_CL
#define KPERF_TILE_CL

#ifndef WG_X
#define WG_X 16
#endif
#ifndef WG_Y
#define WG_Y 8
#endif
#ifndef VEC
#define VEC 1  // outputs per work-item along x: 1, 2 or 4
#endif
#ifndef PY
#define PY 1  // outputs per work-item along y
#endif
#ifndef RADIUS
#define RADIUS 1
#endif
#ifndef SKIP
#define SKIP 2  // rows:k / cols:k keep one line of every SKIP
#endif
#ifndef RECON_LI
#define RECON_LI 0  // 0: nearest neighbour, 1: linear interpolation
#endif
#ifndef KPERF_SCHEME_FILE
#define KPERF_SCHEME_FILE scheme_accurate.cl
#endif
#ifndef KPERF_LOAD_FILE
#define KPERF_LOAD_FILE load_local.cl
#endif
#ifndef KPERF_PRECISION_FILE
#define KPERF_PRECISION_FILE precision_f32.cl
#endif
#ifndef KPERF_PERFORATE_FILE
#define KPERF_PERFORATE_FILE perforate_device.cl
#endif
#ifndef KPERF_OUTPUT_FILE
#define KPERF_OUTPUT_FILE output_none.cl
#endif
#ifndef OUT_KY
#define OUT_KY 1  // output scheme: one output row in OUT_KY is computed
#endif
#ifndef OUT_KX
#define OUT_KX 1  // likewise for columns
#endif
#ifndef OUT_LI
#define OUT_LI 0  // output reconstruction: 0 nearest computed output, 1 linear interpolation
#endif
#ifndef RELAX_SKIP
#define RELAX_SKIP 0  // 1: no barrier between tile fill and compute (a race by design)
#endif
#if (OUT_KY > 1 && PY > 1) || (OUT_KX > 1 && VEC > 1)
#error "an output scheme computes one output per work-item along its axis (PY/VEC must be 1)"
#endif

// A work-item's region: the outputs it accounts for (computed or rebuilt from computed ones).
#define ITEM_ROWS (PY * OUT_KY)
#define ITEM_COLS (VEC * OUT_KX)
#define BLOCK_X (WG_X * ITEM_COLS)
#define BLOCK_Y (WG_Y * ITEM_ROWS)
#define TILE_W (BLOCK_X + 2 * RADIUS)
#define TILE_H (BLOCK_Y + 2 * RADIUS)
#define WG_SIZE (WG_X * WG_Y)

// When the block width is a multiple of 4, each local tile row is stored 16-byte aligned with
// TILE_OFF = 4 - RADIUS slots before tile column 0, so the global row segment
// [block_x0 - 4, block_x0 + BLOCK_X + 4) moves as aligned float4s: wide loads are what reach
// the memory bandwidth on GPUs. Otherwise rows are packed and loaded element by element.
#if (BLOCK_X % 4 == 0) && (RADIUS <= 4)
#define KPERF_VEC_ROWS 1
#define TILE_OFF (4 - RADIUS)
#define TILE_STRIDE (BLOCK_X + 8)
#else
#define KPERF_VEC_ROWS 0
#define TILE_OFF 0
#define TILE_STRIDE TILE_W
#endif
#define TILE_CHUNKS (TILE_STRIDE / 4)  // float4s per local row (vector layout)
#define TILE_ELEMS (TILE_H * TILE_STRIDE)
#define TILE_AT(tile, ty, tx) (tile)[(ty) * TILE_STRIDE + (tx) + TILE_OFF]

#define KPERF_WG_ATTR __attribute__((reqd_work_group_size(WG_X, WG_Y, 1)))

// Linear id of the work-item inside its group, used to stride cooperative loops.
inline int kperf_local_linear_id(void) { return (int)(get_local_id(1) * WG_X + get_local_id(0)); }

// Global coordinates of tile element (0, 0) of this work-group.
inline int kperf_tile_origin_y(void) { return (int)get_group_id(1) * BLOCK_Y - RADIUS; }
inline int kperf_tile_origin_x(void) { return (int)get_group_id(0) * BLOCK_X - RADIUS; }

// Global coordinates of a work-item's region (its first output without an output scheme).
inline int kperf_out_y0(void) { return (int)get_group_id(1) * BLOCK_Y + (int)get_local_id(1) * ITEM_ROWS; }
inline int kperf_out_x0(void) { return (int)get_group_id(0) * BLOCK_X + (int)get_local_id(0) * ITEM_COLS; }

// Block-local coordinate of the first output a work-item computes: the start of its region, or
// under an output scheme the line k / 2 of its region (which may lie past the grid's end in a
// final partial period: then that work-item stores nothing).
inline int kperf_item_line(int local_id, int per_item, int k) { return local_id * per_item + k / 2; }
inline int kperf_item_row(int height) { return kperf_item_line((int)get_local_id(1), ITEM_ROWS, OUT_KY); }
inline int kperf_item_col(int width) { return kperf_item_line((int)get_local_id(0), ITEM_COLS, OUT_KX); }
// Global coordinates of a work-item's first computed output.
inline int kperf_out_y(int height) { return (int)get_group_id(1) * BLOCK_Y + kperf_item_row(height); }
inline int kperf_out_x(int width) { return (int)get_group_id(0) * BLOCK_X + kperf_item_col(width); }

#define KPERF_STR_(x) #x
#define KPERF_STR(x) KPERF_STR_(x)
#include KPERF_STR(KPERF_PRECISION_FILE)
#include KPERF_STR(KPERF_PERFORATE_FILE)

// Differential probes (`--cl-options`), for telling memory time from compute time; their outputs
// are not the app's. KPERF_PROBE_LOADS_ONLY stores each output's own (reconstructed) window
// element instead of computing: the load path, the scheme and the stores, no arithmetic.
// KPERF_PROBE_NO_LOADS turns every read of an input buffer into a value made from its index,
// which the compiler cannot fold: the same addresses, local stores, reconstruction, arithmetic
// and stores, with no global loads (buffer load paths; image reads stay).
#ifndef KPERF_PROBE_LOADS_ONLY
#define KPERF_PROBE_LOADS_ONLY 0
#endif
#ifndef KPERF_PROBE_NO_LOADS
#define KPERF_PROBE_NO_LOADS 0
#endif
#if KPERF_PROBE_NO_LOADS
#undef kperf_read_in
#undef kperf_read_in4
#define kperf_read_in(p, i) ((float)((i) & 1023))
#define kperf_read_in4(p, i4) ((float4)((float)((i4) & 1023)))
#endif

// Clamp-to-edge read of a global buffer (the local and global load paths), at the storage
// precision and through the perforation site's packing.
inline float kperf_load_buffer(__global const KPERF_IN_T* in, int width, int height, int gy, int gx) {
  return kperf_read_in(in, kperf_src_row(gy, height) * kperf_src_width(width) + kperf_src_col(gx, width));
}

// A tile line that holds its own value (no reconstruction along that axis).
inline void kperf_identity_source(int t, int* a, int* b, float* w) {
  *a = *b = t;
  *w = 0.0f;
}

#if RELAX_SKIP
#define KPERF_FILL_BARRIER()
#else
#define KPERF_FILL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#endif

#include KPERF_STR(KPERF_LOAD_FILE)

// Whether this group's rows may move as aligned float4s: rows 16-byte aligned and the segment
// [block_x0 - 4, block_x0 + BLOCK_X + 4) inside the grid (no clamping along x needed).
inline bool kperf_rows_vectorizable(int width) {
#if KPERF_VEC_ROWS && KPERF_LOAD_BUFFER
  const int xa = (int)get_group_id(0) * BLOCK_X - 4;
  return (width & 3) == 0 && xa >= 0 && xa + TILE_STRIDE <= width;
#else
  return false;
#endif
}

// Cooperatively loads tile rows first, first + step, ... (n_rows of them), every column.
// The caller puts the barrier after it.
#define KPERF_LOAD_ITERS ((TILE_H * TILE_CHUNKS + WG_SIZE - 1) / WG_SIZE)
inline void kperf_load_rows(__local float* tile, KPERF_INPUT_PARAM in, int width, int height,
                            int first, int step, int n_rows) {
  const int gy0 = kperf_tile_origin_y();
  const int lid = kperf_local_linear_id();
#if KPERF_VEC_ROWS && KPERF_LOAD_BUFFER
  if (kperf_rows_vectorizable(width)) {
    // Every load of this work-item is issued before the first local store, so all of them
    // are in flight together instead of one memory latency per loop trip.
    const int xa4 = ((int)get_group_id(0) * BLOCK_X - 4) / 4;
    const int total = n_rows * TILE_CHUNKS;
    float4 staged[KPERF_LOAD_ITERS];
#pragma unroll
    for (int k = 0; k < KPERF_LOAD_ITERS; ++k) {
      const int i = lid + k * WG_SIZE;
      if (i < total) {
        const int j = i / TILE_CHUNKS;
        const int gy = kperf_src_row(gy0 + first + j * step, height);
        staged[k] = kperf_read_in4(in, gy * (kperf_src_width(width) / 4) + xa4 + (i - j * TILE_CHUNKS));
      }
    }
#pragma unroll
    for (int k = 0; k < KPERF_LOAD_ITERS; ++k) {
      const int i = lid + k * WG_SIZE;
      if (i < total) {
        const int j = i / TILE_CHUNKS;
        ((__local float4*)tile)[(first + j * step) * TILE_CHUNKS + (i - j * TILE_CHUNKS)] = staged[k];
      }
    }
    return;
  }
#endif
  const int gx0 = kperf_tile_origin_x();
  for (int i = lid; i < n_rows * TILE_W; i += WG_SIZE) {
    const int j = i / TILE_W;
    const int tx = i - j * TILE_W;
    const int ty = first + j * step;
    TILE_AT(tile, ty, tx) = kperf_load(in, width, height, gy0 + ty, gx0 + tx);
  }
}

#include KPERF_STR(KPERF_SCHEME_FILE)

// The (PY + 2 RADIUS) x (VEC + 2 RADIUS) neighbourhood of a work-item's outputs, gathered from
// the tile into private memory; output (p, v)'s own element is at row RADIUS + p, column
// RADIUS + v.
#define KPERF_WIN_W (VEC + 2 * RADIUS)
#define KPERF_WIN_H (PY + 2 * RADIUS)
#define KPERF_AT(c, dy, dx) (c)[(dy) * KPERF_WIN_W + (dx)]

inline void kperf_gather_window(__local const float* tile, float* win, int width, int height) {
  const int lx = (int)get_local_id(0);
  const int row0 = kperf_item_row(height);  // tile row of the window's first row
#if KPERF_VEC_ROWS && VEC == 4
  // The window's columns sit at local offsets TILE_OFF .. TILE_OFF + KPERF_WIN_W - 1 from the
  // aligned index 4 * lx of each row (VEC 4 implies OUT_KX 1): read the float4s covering them
  // (no bank conflicts).
#define KPERF_FIRST_CHUNK (TILE_OFF / 4)
#define KPERF_N_CHUNKS ((TILE_OFF + KPERF_WIN_W - 1) / 4 - KPERF_FIRST_CHUNK + 1)
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    float row[KPERF_N_CHUNKS * 4];
#ifdef KPERF_FUSED_ROWS
    int above, below;
    float w;
    kperf_window_row_source(row0, dy, &above, &below, &w);
#pragma unroll
    for (int ch = 0; ch < KPERF_N_CHUNKS; ++ch) {
      float4 a = ((__local const float4*)tile)[above * TILE_CHUNKS + lx + KPERF_FIRST_CHUNK + ch];
#if RECON_LI  // nn always has above == below: one read
      if (above != below) {
        const float4 b = ((__local const float4*)tile)[below * TILE_CHUNKS + lx + KPERF_FIRST_CHUNK + ch];
        a = mad((float4)(w), b - a, a);
      }
#endif
      vstore4(a, ch, row);
    }
#else
#pragma unroll
    for (int ch = 0; ch < KPERF_N_CHUNKS; ++ch)
      vstore4(((__local const float4*)tile)[(row0 + dy) * TILE_CHUNKS + lx + KPERF_FIRST_CHUNK + ch],
              ch, row);
#endif
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx)
      win[dy * KPERF_WIN_W + dx] = row[TILE_OFF - 4 * KPERF_FIRST_CHUNK + dx];
  }
#else
  const int col0 = kperf_item_col(width);
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
#ifdef KPERF_FUSED_ROWS
    int above, below;
    float w;
    kperf_window_row_source(row0, dy, &above, &below, &w);
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
      float a = TILE_AT(tile, above, col0 + dx);
#if RECON_LI
      if (above != below) a = mad(w, TILE_AT(tile, below, col0 + dx) - a, a);
#endif
      win[dy * KPERF_WIN_W + dx] = a;
    }
#else
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx)
      win[dy * KPERF_WIN_W + dx] = TILE_AT(tile, row0 + dy, col0 + dx);
#endif
  }
#endif
}

// The global load path: no tile. Each window element is read from global memory where the
// scheme's tile would take its value from (kperf_scheme_row_source / _col_source), with the
// same reconstruction arithmetic, so every load path gives the same outputs.
inline void kperf_gather_window_global(KPERF_INPUT_PARAM in, int width, int height, float* win) {
  const int row0 = kperf_item_row(height), col0 = kperf_item_col(width);
  const int gy0 = kperf_tile_origin_y(), gx0 = kperf_tile_origin_x();
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    int ra, rb;
    float wr;
    kperf_scheme_row_source(row0 + dy, &ra, &rb, &wr);
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
      int ca, cb;
      float wc;
      kperf_scheme_col_source(col0 + dx, &ca, &cb, &wc);
      float v = kperf_load(in, width, height, gy0 + ra, gx0 + ca);
#if RECON_LI  // every scheme rebuilds along one axis at most
      if (ca != cb) v = mad(wc, kperf_load(in, width, height, gy0 + ra, gx0 + cb) - v, v);
      if (ra != rb) v = mad(wr, kperf_load(in, width, height, gy0 + rb, gx0 + ca) - v, v);
#endif
      win[dy * KPERF_WIN_W + dx] = v;
    }
  }
}

// Fills float win[KPERF_WIN_H * KPERF_WIN_W] by the selected load path (declaring the local
// tile at kernel scope where the path has one).
#if KPERF_LOAD_TILE
#define KPERF_GATHER(win, in, width, height)                                \
  __local float kperf_tile[TILE_ELEMS] __attribute__((aligned(16)));       \
  kperf_fill_tile(kperf_tile, in, width, height);                           \
  kperf_gather_window(kperf_tile, win, width, height)
#else
#define KPERF_GATHER(win, in, width, height) kperf_gather_window_global(in, width, height, win)
#endif

// KPERF_PROBE_LOADS_ONLY: each output is its own window element.
inline void kperf_probe_centres(const float* win, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) result[p * VEC + v] = win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v];
}
#if KPERF_PROBE_LOADS_ONLY
#define KPERF_COMPUTE(block_fn, win, result) kperf_probe_centres(win, result)
#else
#define KPERF_COMPUTE(block_fn, win, result) block_fn(win, result)
#endif

// Writes PY x VEC outputs whose first is (y0, x0) (float4 stores where the rows allow them).
inline void kperf_store_at(__global KPERF_OUT_T* out, int width, int height, int y0, int x0,
                           const float* values) {
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    const int y = y0 + p;
    if (y >= height) return;
#if VEC == 4
    if ((width & 3) == 0 && x0 + 3 < width) {
      kperf_write_out4(out, (y * width + x0) / 4, vload4(p, values));
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
      const int j = i / TILE_CHUNKS;
      const int c = i - j * TILE_CHUNKS;
      const int gy = clamp(gy0 + j * KPERF_PIPE_STEP, 0, height - 1);
      if (inside) {
        staged[k] = ((__global const float4*)in)[(gy * width + xa) / 4 + c];
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
      const int j = i / TILE_CHUNKS;
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
      kperf_gather_window(tile, win, width, height);                                       \
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
#define KPERF_IMAGE_KERNEL_BLOCK(block_fn)                                                  \
  __kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out,   \
                                        int width, int height) {                           \
    float win[KPERF_WIN_H * KPERF_WIN_W];                                                  \
    KPERF_GATHER(win, in, width, height);                                                  \
    float result[PY * VEC];                                                                \
    KPERF_COMPUTE(block_fn, win, result);                                                  \
    KPERF_STORE(out, width, height, result);                                               \
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

#endif  // KPERF_TILE_CL
