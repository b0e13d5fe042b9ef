// kperf tile contract: geometry shared by every app kernel and every perforation scheme.
//
// A work-group of WG_X x WG_Y work-items computes a BLOCK_X x BLOCK_Y block of outputs
// (BLOCK_X = WG_X * VEC, BLOCK_Y = WG_Y * PY: each work-item computes VEC consecutive outputs
// along x in each of PY consecutive rows) from a local
// tile of TILE_H x TILE_W floats whose element (ty, tx) stands for the global element
// (group_y * BLOCK_Y + ty - RADIUS, group_x * BLOCK_X + tx - RADIUS), clamped to the grid (where
// the shared fill's blocks overlap, kperf_block_y0() and kperf_block_x0() give the block's origin).
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
//   computing one line in OUT_KY (rows) / OUT_KX (columns); its fill file
//   (KPERF_OUTPUT_FILL_FILE: output_fill_fused.cl, output_fill_separate.cl) writes the rest from
//   the computed ones, in the same launch or in a second one.
// Every macro has a default so each file compiles alone.
#ifndef KPERF_TILE_CL
#define KPERF_TILE_CL

// The fp64 truth of an app: its own accurate kernel with every float in double (the host builds
// it with -DKPERF_FP64_TRUTH=1, the global load path and one output per work-item, and passes
// double buffers). Defined here, after the compiler's built-in declarations, so they keep float.
#ifndef KPERF_FP64_TRUTH
#define KPERF_FP64_TRUTH 0
#endif
#if KPERF_FP64_TRUTH
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define float double
#endif

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
#ifndef OUT_PY
#define OUT_PY 1  // computed lines per work-item along y under an output scheme along y
#endif
#ifndef OUT_VEC
#define OUT_VEC 1  // likewise along x
#endif
#ifndef OUT_FUSED
#define OUT_FUSED 1  // the fill writes in the same launch (output_fill_fused.cl), else a second one
#endif
#ifndef KPERF_FRAME_FREE
#define KPERF_FRAME_FREE 0  // 1: the input scheme's tile holds every element's own value (accurate)
#endif
#ifndef RELAX_SKIP
#define RELAX_SKIP 0  // 1: no barrier between tile fill and compute (a race by design)
#endif
// Along an output scheme's axis the app computes one output per window (PY or VEC is 1 there)
// and a work-item computes OUT_PY (OUT_VEC) of those windows, one output period apart.
#if (OUT_KY > 1 && PY != 1) || (OUT_KX > 1 && VEC != 1) || (OUT_KY == 1 && OUT_PY != 1) || \
    (OUT_KX == 1 && OUT_VEC != 1)
#error "along an output scheme's axis PY (VEC) is 1 and OUT_PY (OUT_VEC) counts the computed lines"
#endif

// A work-item's region: the outputs it accounts for (computed or rebuilt from computed ones).
#define ITEM_ROWS (PY * OUT_PY * OUT_KY)
#define ITEM_COLS (VEC * OUT_VEC * OUT_KX)
#define BLOCK_X (WG_X * ITEM_COLS)
#define BLOCK_Y (WG_Y * ITEM_ROWS)
// Under the fused li fill a work-item also computes the next computed line along y, the first of
// the next work-item or block. Along x a work-item writes the aligned run of columns of its
// region (vector stores) and computes every computed column that run takes values from: its left
// neighbour's last (KPERF_OUT_PREV_X: li, and nn with an even period, whose ties take the lower
// line) and, under li with a period of 3 or more, its right neighbour's first. Where the tile
// does not depend on the group (KPERF_FRAME_FREE) the block's first and last work-items read
// those from the tile (one period wider at the end, its padding at the start); otherwise from
// global memory as the neighbouring group reads them (KPERF_OUTPUT_WINDOW).
// Under the shared li fill on such a tile the blocks of neighbouring groups overlap by one computed
// row instead (KPERF_OVERLAP_Y, set by the host): a block's last computed row is the next block's
// first, computed by the group's last work-items along with their own rows, read to interpolate
// and stored by the next group, so no work-item computes a row past its own.
#ifndef KPERF_OVERLAP_Y
#define KPERF_OVERLAP_Y 0
#endif
#define KPERF_OUT_READS_NEXT_Y (OUT_KY > 1 && OUT_LI && OUT_FUSED)
#define KPERF_OUT_NEXT_Y (KPERF_OUT_READS_NEXT_Y && !KPERF_OVERLAP_Y)
#if KPERF_OVERLAP_Y && !(KPERF_OUT_READS_NEXT_Y && KPERF_FRAME_FREE && WG_Y * OUT_PY > 1)
#error "KPERF_OVERLAP_Y: li along y on a tile that does not depend on the group, two rows a block"
#endif
// Output rows from one group's block to the next one's along y.
#define KPERF_GROUP_STEP_Y (BLOCK_Y - KPERF_OVERLAP_Y * OUT_KY)
// Along x (KPERF_OVERLAP_X, same fill and tile) they overlap by whole work-items: the group's first
// work-item computes the previous block's last work-item's columns, its last one the next block's
// first work-item's, and neither stores, so the column runs keep their alignment.
#ifndef KPERF_OVERLAP_X
#define KPERF_OVERLAP_X 0
#endif
#define KPERF_OUT_READS_NEXT_X (OUT_KX > 2 && OUT_LI && OUT_FUSED)
#define KPERF_OUT_READS_PREV_X (OUT_KX > 1 && OUT_FUSED && (OUT_LI || OUT_KX % 2 == 0))
#define KPERF_OUT_NEXT_X (KPERF_OUT_READS_NEXT_X && !KPERF_OVERLAP_X)
#define KPERF_OUT_PREV_X (KPERF_OUT_READS_PREV_X && !KPERF_OVERLAP_X)
#define KPERF_SIDE_ITEMS_X (KPERF_OVERLAP_X * (KPERF_OUT_READS_PREV_X + KPERF_OUT_READS_NEXT_X))
#if KPERF_OVERLAP_X && !(KPERF_SIDE_ITEMS_X && KPERF_FRAME_FREE && WG_X > KPERF_SIDE_ITEMS_X)
#error "KPERF_OVERLAP_X: the neighbours' columns, a group-independent tile, wider groups"
#endif
// Output columns from one group's block to the next one's, and the first block's start.
#define KPERF_GROUP_STEP_X (BLOCK_X - KPERF_SIDE_ITEMS_X * ITEM_COLS)
#define KPERF_BLOCK_X_SHIFT (KPERF_OVERLAP_X * KPERF_OUT_READS_PREV_X * ITEM_COLS)
// What every block's first column is a multiple of.
#define KPERF_BLOCK_X_ALIGN (KPERF_OVERLAP_X ? ITEM_COLS : BLOCK_X)
#define KPERF_TILE_EXT_Y (KPERF_FRAME_FREE && KPERF_OUT_NEXT_Y ? OUT_KY : 0)
#define KPERF_TILE_EXT_X (KPERF_FRAME_FREE && KPERF_OUT_NEXT_X ? OUT_KX : 0)
#define TILE_W (BLOCK_X + 2 * RADIUS + KPERF_TILE_EXT_X)
#define TILE_H (BLOCK_Y + 2 * RADIUS + KPERF_TILE_EXT_Y)
#define WG_SIZE (WG_X * WG_Y)

#define KPERF_STR_(x) #x
#define KPERF_STR(x) KPERF_STR_(x)
// i / n for an index known to be non-negative: one shift for a power-of-two n, where a signed
// division costs three instructions, and a wide kernel divides each of its row addresses.
#define KPERF_UDIV(i, n) ((int)((uint)(i) / (uint)(n)))

// Eight floats as two 16-byte stores (vstore8 was scalarised by NVIDIA's compiler).
inline void kperf_store_float8(float8 v, __global float* p, int i8) {
  ((__global float4*)p)[2 * i8] = v.lo;
  ((__global float4*)p)[2 * i8 + 1] = v.hi;
}
#include KPERF_STR(KPERF_PRECISION_FILE)

// When the block width is a multiple of 4, each local tile row is stored 16-byte aligned with
// TILE_OFF = KPERF_TILE_PAD - RADIUS slots before tile column 0, so the global row segment
// [block_x0 - PAD, block_x0 + BLOCK_X + PAD) moves as aligned 16-byte loads (KPERF_IN_VEC
// elements: 4 floats, or 8 halves where the block width allows, PAD 8): wide loads are what
// reach the memory bandwidth on GPUs. Otherwise rows are packed and loaded element by element.
#if (KPERF_BLOCK_X_ALIGN % 4 == 0) && (RADIUS <= 4)
#define KPERF_VEC_ROWS 1
#if KPERF_IN_VEC == 8 && KPERF_BLOCK_X_ALIGN % 8 == 0
#define KPERF_TILE_PAD 8
#else
#define KPERF_TILE_PAD 4
#endif
#define TILE_OFF (KPERF_TILE_PAD - RADIUS)
#define TILE_STRIDE (BLOCK_X + 2 * KPERF_TILE_PAD + (KPERF_TILE_EXT_X + 3) / 4 * 4)
#else
#define KPERF_VEC_ROWS 0
#define TILE_OFF 0
#define TILE_STRIDE TILE_W
#endif
#define TILE_CHUNKS (TILE_STRIDE / 4)  // float4s per local row (vector layout)
#define TILE_ELEMS ((TILE_H + KPERF_TILE_EXTRA_ROWS) * TILE_STRIDE)  // a scheme may ask for more rows
#define TILE_AT(tile, ty, tx) (tile)[(ty) * TILE_STRIDE + (tx) + TILE_OFF]

#define KPERF_WG_ATTR __attribute__((reqd_work_group_size(WG_X, WG_Y, 1)))

// Linear id of the work-item inside its group, used to stride cooperative loops.
inline int kperf_local_linear_id(void) { return (int)(get_local_id(1) * WG_X + get_local_id(0)); }

// Global coordinates of tile element (0, 0) of this work-group.
inline int kperf_block_y0(void) { return (int)get_group_id(1) * KPERF_GROUP_STEP_Y; }
inline int kperf_tile_origin_y(void) { return kperf_block_y0() - RADIUS; }
inline int kperf_block_x0(void) {
  return (int)get_group_id(0) * KPERF_GROUP_STEP_X - KPERF_BLOCK_X_SHIFT;
}
inline int kperf_tile_origin_x(void) { return kperf_block_x0() - RADIUS; }

// Global coordinates of a work-item's region (its first output without an output scheme).
inline int kperf_out_y0(void) { return kperf_block_y0() + (int)get_local_id(1) * ITEM_ROWS; }
inline int kperf_out_x0(void) { return kperf_block_x0() + (int)get_local_id(0) * ITEM_COLS; }

// Block-local coordinates of a work-item's computed output q along y (x): the start of its region
// without an output scheme, else line q * K + K / 2 of its region, which may lie past the grid's
// end in a final partial period (then it is not stored). It is also the first tile row (column)
// of that output's window.
inline int kperf_item_row(int q) { return (int)get_local_id(1) * ITEM_ROWS + q * OUT_KY + OUT_KY / 2; }
inline int kperf_item_col(int q) { return (int)get_local_id(0) * ITEM_COLS + q * OUT_KX + OUT_KX / 2; }

#include KPERF_STR(KPERF_PERFORATE_FILE)

// Differential probes (`--cl-options`), for telling memory time from compute time; their outputs
// are not the app's. KPERF_PROBE_LOADS_ONLY stores each output's own (reconstructed) window
// element instead of computing: the load path, the scheme and the stores, no arithmetic.
// KPERF_PROBE_NO_LOADS turns every read of an input buffer into a value made from its address,
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
// The value depends on the pointer as well as the index: callers may address a row's loads
// from one pointer with constant indices (kperf_read_window_row).
#define KPERF_PROBE_BITS(p, i) (((uint)(size_t)(p) / (uint)sizeof(*(p)) + (uint)(i)) & 1023)
#define kperf_read_in(p, i) ((float)KPERF_PROBE_BITS(p, i))
#define kperf_read_in4(p, i4) ((float4)((float)KPERF_PROBE_BITS(p, i4)))
#undef kperf_read_in8
#define kperf_read_in8(p, i8) ((float8)((float)KPERF_PROBE_BITS(p, i8)))
#undef kperf_read_in2
#define kperf_read_in2(p, i2) ((float2)((float)KPERF_PROBE_BITS(p, i2)))
#undef kperf_read_in_vec
#define kperf_read_in_vec(p, i) ((KPERF_IN_VEC_T)KPERF_PROBE_BITS(p, i))
#endif

// Clamp-to-edge read of a global buffer (the local and global load paths), at the storage
// precision and through the perforation site's packing.
inline float kperf_load_buffer(__global const KPERF_IN_T* in, int width, int height, int gy, int gx) {
  return kperf_read_in(in, kperf_src_row(gy, height) * kperf_src_width(width) + kperf_src_col(gx, width));
}

// A tile line that holds its own value (no reconstruction along that axis). Every line source
// takes the index of the work-group whose tile it speaks of (along its axis) first.
inline void kperf_identity_source(int group, int t, int* a, int* b, float* w) {
  *a = *b = t;
  *w = 0.0f;
}

#if RELAX_SKIP
#define KPERF_FILL_BARRIER()
#else
#define KPERF_FILL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#endif

#include KPERF_STR(KPERF_LOAD_FILE)

// Whether this group's rows may move as aligned 16-byte loads: rows 16-byte aligned and the
// segment [block_x0 - PAD, block_x0 + BLOCK_X + PAD) inside the grid (no clamping along x).
inline bool kperf_rows_vectorizable(int width) {
#if KPERF_VEC_ROWS && KPERF_LOAD_BUFFER
  const int xa = kperf_block_x0() - KPERF_TILE_PAD;
  return width % KPERF_IN_VEC == 0 && xa >= 0 && xa + TILE_STRIDE <= width;
#else
  return false;
#endif
}

// Cooperatively loads n_rows tile rows, every column: runs of `run` consecutive rows starting at
// first, first + step, first + 2 step... (run 1: every step-th row). The caller puts the barrier
// after it.
#define KPERF_IN_CHUNKS (TILE_STRIDE / KPERF_IN_VEC)  // 16-byte global loads per tile row
#define KPERF_LOAD_ITERS ((TILE_H * KPERF_IN_CHUNKS + WG_SIZE - 1) / WG_SIZE)
#define KPERF_RUN_ROW(first, step, run, j) ((first) + ((j) / (run)) * (step) + (j) % (run))
inline void kperf_load_rows(__local float* tile, KPERF_INPUT_PARAM in, int width, int height,
                            int first, int step, int run, int n_rows) {
  const int gy0 = kperf_tile_origin_y();
  const int lid = kperf_local_linear_id();
#if KPERF_VEC_ROWS && KPERF_LOAD_BUFFER
  if (kperf_rows_vectorizable(width)) {
    // Every load of this work-item is issued before the first local store, so all of them
    // are in flight together instead of one memory latency per loop trip.
    const int xa = (kperf_block_x0() - KPERF_TILE_PAD) / KPERF_IN_VEC;
    const int total = n_rows * KPERF_IN_CHUNKS;
    KPERF_IN_VEC_T staged[KPERF_LOAD_ITERS];
#pragma unroll
    for (int k = 0; k < KPERF_LOAD_ITERS; ++k) {
      const int i = lid + k * WG_SIZE;
      if (i < total) {
        const int j = KPERF_UDIV(i, KPERF_IN_CHUNKS);
        const int gy = kperf_src_row(gy0 + KPERF_RUN_ROW(first, step, run, j), height);
        staged[k] = kperf_read_in_vec(in, gy * (kperf_src_width(width) / KPERF_IN_VEC) + xa +
                                              (i - j * KPERF_IN_CHUNKS));
      }
    }
#pragma unroll
    for (int k = 0; k < KPERF_LOAD_ITERS; ++k) {
      const int i = lid + k * WG_SIZE;
      if (i < total) {
        const int j = KPERF_UDIV(i, KPERF_IN_CHUNKS);
        kperf_in_vec_to_local((__local float4*)tile + KPERF_RUN_ROW(first, step, run, j) * TILE_CHUNKS +
                                  (i - j * KPERF_IN_CHUNKS) * (KPERF_IN_VEC / 4),
                              staged[k]);
      }
    }
    return;
  }
#endif
  const int gx0 = kperf_tile_origin_x();
  for (int i = lid; i < n_rows * TILE_W; i += WG_SIZE) {
    const int j = KPERF_UDIV(i, TILE_W);
    const int tx = i - j * TILE_W;
    const int ty = KPERF_RUN_ROW(first, step, run, j);
    TILE_AT(tile, ty, tx) = kperf_load(in, width, height, gy0 + ty, gx0 + tx);
  }
}

#include KPERF_STR(KPERF_SCHEME_FILE)
#ifndef KPERF_TILE_EXTRA_ROWS
#define KPERF_TILE_EXTRA_ROWS 0
#endif

// The (PY + 2 RADIUS) x (VEC + 2 RADIUS) neighbourhood of a work-item's outputs (under an output
// scheme: of one computed output), gathered into private memory; output (p, v)'s own element is
// at row RADIUS + p, column RADIUS + v.
#define KPERF_WIN_W (VEC + 2 * RADIUS)
#define KPERF_WIN_H (PY + 2 * RADIUS)
#define KPERF_AT(c, dy, dx) (c)[(dy) * KPERF_WIN_W + (dx)]

// An id per window row, equal for two rows exactly where one holds a copy of the other, known at
// compile time: under rows:2 nn with whole periods per work-item (PY even, no output scheme along
// y) a window starts on a kept row, so odd rows copy the row above on every load path and at
// the grid's edges. Elsewhere each row's own index. An app may skip work on equal rows (median's
// column stage), where the compiler cannot see that two values are equal.
inline int kperf_window_row_id(int dy) {
#if defined(KPERF_FUSED_ROWS) && OUT_KY == 1 && SKIP == 2 && PY % 2 == 0 && !RECON_LI
  return dy - dy % 2;
#else
  return dy;
#endif
}

// Tile row r's elements col0 .. col0 + KPERF_WIN_W - 1 (one window row).
inline void kperf_tile_row(__local const float* tile, int r, int col0, float* row) {
#if KPERF_VEC_ROWS && VEC % 4 == 0
  // The columns sit at local offsets TILE_OFF .. TILE_OFF + KPERF_WIN_W - 1 from the aligned
  // index col0 (VEC 4 or 8 implies OUT_KX 1, so col0 = VEC lx): read the float4s covering them
  // (no bank conflicts).
#define KPERF_FIRST_CHUNK (TILE_OFF / 4)
#define KPERF_N_CHUNKS ((TILE_OFF + KPERF_WIN_W - 1) / 4 - KPERF_FIRST_CHUNK + 1)
  float chunks[KPERF_N_CHUNKS * 4];
#pragma unroll
  for (int ch = 0; ch < KPERF_N_CHUNKS; ++ch)
    vstore4(((__local const float4*)tile)[r * TILE_CHUNKS + col0 / 4 + KPERF_FIRST_CHUNK + ch], ch,
            chunks);
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = chunks[TILE_OFF - 4 * KPERF_FIRST_CHUNK + dx];
#else
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = TILE_AT(tile, r, col0 + dx);
#endif
}

#if RECON_LI
// An interpolated window row: row moves to weight w towards below where mix is set (a select,
// so that a below that is not loaded never reaches the output).
inline void kperf_mix_row(float* row, const float* below, float w, int mix) {
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
    const float mixed = mad(w, below[dx] - row[dx], row[dx]);
    row[dx] = mix ? mixed : row[dx];
  }
}
#endif

// From the local tile: the window whose first element is tile element (row0, col0).
inline void kperf_gather_window(__local const float* tile, float* win, int row0, int col0) {
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
#ifdef KPERF_FUSED_ROWS
    int above, below, mix;
    float w;
    kperf_window_row_source(row0, dy, &above, &below, &w, &mix);
    kperf_tile_row(tile, above, col0, &win[dy * KPERF_WIN_W]);
#if RECON_LI  // nn always has above == below: one read
    if (above != below) {
      float b[KPERF_WIN_W];
      kperf_tile_row(tile, below, col0, b);
      kperf_mix_row(&win[dy * KPERF_WIN_W], b, w, mix);
    }
#endif
#else
    kperf_tile_row(tile, row0 + dy, col0, &win[dy * KPERF_WIN_W]);
#endif
  }
}

// The global load path reads window rows as wide loads (kperf_gather_window_global) where the
// columns need no reconstruction (the scheme says KPERF_COLS_OWN_SOURCE) and sit unpacked in
// the input buffer (KPERF_SRC_COLS_DIRECT), with VEC 4 or 8; -DKPERF_GLOBAL_VEC_ROWS=0 turns it
// off for comparison.
#ifndef KPERF_GLOBAL_VEC_ROWS
#if defined(KPERF_COLS_OWN_SOURCE) && KPERF_SRC_COLS_DIRECT && KPERF_LOAD_BUFFER && \
    (VEC == 4 || VEC == 8)
#define KPERF_GLOBAL_VEC_ROWS 1
#else
#define KPERF_GLOBAL_VEC_ROWS 0
#endif
#endif
#if KPERF_GLOBAL_VEC_ROWS
// The RADIUS elements on each side of a window row as one aligned 4-element load per side, where
// RADIUS is 2 to 4 and the input is stored as floats: a warp's narrow load touches the same cache
// lines as a 4-wide one, so this halves the side loads of a 5x5 window. Measured on an H200 at
// 8192^2 (gaussian5, sobel5; accurate, rows:2 nn and li) it made f32 up to 8 % faster, and
// halves, which then convert elements they drop, up to 6 % slower; radius 1 would gain no load.
// -DKPERF_GLOBAL_SIDE_CHUNKS=0 or 1 chooses.
#ifndef KPERF_GLOBAL_SIDE_CHUNKS
#define KPERF_GLOBAL_SIDE_CHUNKS (RADIUS >= 2 && RADIUS <= 4 && KPERF_IN_BYTES == 4)
#endif
// 16-bit elements with RADIUS 2: each side is one aligned 4-byte word, whose two elements the row
// needs (no conversion is wasted): 2 side loads instead of 4. -DKPERF_GLOBAL_SIDE_WORDS=0 or 1.
#ifndef KPERF_GLOBAL_SIDE_WORDS
#define KPERF_GLOBAL_SIDE_WORDS (RADIUS == 2 && KPERF_IN_BYTES == 2 && !KPERF_GLOBAL_SIDE_CHUNKS)
#endif
// Whether the window row whose first output column is gxo reads wide: rows of whole VEC blocks,
// gxo a block's first column, neither the row's first block nor its last (the side loads stay in
// the row).
inline bool kperf_wide_row_inside(int width, int gxo) {
  return width % VEC == 0 && gxo % VEC == 0 && gxo >= RADIUS && gxo + VEC + RADIUS <= width;
}
// Window row elements from global index i (the first output's column, where
// kperf_wide_row_inside holds): VEC as one aligned load, RADIUS on each side. Every load is
// addressed from one pointer to element i (aligned to VEC elements), so a row costs one address
// and its side loads take constant offsets.
inline void kperf_read_window_row(KPERF_INPUT_PARAM in, int i, float* row) {
  KPERF_INPUT_PARAM at = in + i;
#if VEC == 8
  vstore8(kperf_read_in8(at, 0), 0, row + RADIUS);
#else
  vstore4(kperf_read_in4(at, 0), 0, row + RADIUS);
#endif
#if KPERF_GLOBAL_SIDE_CHUNKS
  float sides[8];
  vstore4(kperf_read_in4(at, -1), 0, sides);
  vstore4(kperf_read_in4(at, VEC / 4), 1, sides);
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = sides[4 - RADIUS + r];
    row[RADIUS + VEC + r] = sides[4 + r];
  }
#elif KPERF_GLOBAL_SIDE_WORDS
  vstore2(kperf_read_in2(at, -1), 0, row);
  vstore2(kperf_read_in2(at, VEC / 2), 0, row + RADIUS + VEC);
#else
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = kperf_read_in(at, r - RADIUS);
    row[RADIUS + VEC + r] = kperf_read_in(at, VEC + r);
  }
#endif
}
#endif

#if KPERF_GLOBAL_VEC_ROWS
// The source rows of window row dy on the wide global path (kperf_gather_window_global).
inline void kperf_wide_row_source(int group_y, int row0, int dy, int* ra, int* rb, float* wr,
                                  int* mix) {
#if defined(KPERF_FUSED_ROWS) && OUT_KY == 1 && PY % SKIP == 0
  // The fused local gather's compile-time row sources: rows that repeat a kept row read the
  // same addresses, and the compiler merges their loads and arithmetic.
  kperf_window_row_source(row0, dy, ra, rb, wr, mix);
#else
  kperf_scheme_row_source(group_y, row0 + dy, ra, rb, wr);
  *mix = *ra != *rb;
#endif
}
#endif

// Under li a window row's bits are those of two rows to mix; with SKIP 2 the weight of every
// mixed row is 1/2, which an app on halves can apply exactly (half_pairs.cl's kperf_pair_mid).
#if KPERF_GLOBAL_VEC_ROWS && KPERF_IN_BYTES == 2 && (!RECON_LI || SKIP == 2)
#define KPERF_GLOBAL_BITS_ROWS 1
#if RECON_LI
#define KPERF_BITS_BELOW_ELEMS (KPERF_WIN_H * KPERF_WIN_W)
#else
#define KPERF_BITS_BELOW_ELEMS 1
#endif
// A window row's 16-bit elements as stored, for an app that works on halves as they are
// (median's packed selection): the addresses of kperf_read_window_row, no conversion.
inline void kperf_read_window_row_bits(KPERF_INPUT_PARAM in, int i, ushort* row) {
  __global const ushort* elements = (__global const ushort*)in + i;
#if KPERF_PROBE_NO_LOADS  // bits made from the addresses, as kperf_read_in's probe makes values
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx)
    row[dx] = (ushort)KPERF_PROBE_BITS(elements, dx - RADIUS);
#else
#if VEC == 8
  const uint4 block = *(__global const uint4*)elements;
  const uint words[4] = {block.s0, block.s1, block.s2, block.s3};
#else
  const uint2 block = *(__global const uint2*)elements;
  const uint words[2] = {block.s0, block.s1};
#endif
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    row[RADIUS + 2 * k] = (ushort)words[k];
    row[RADIUS + 2 * k + 1] = (ushort)(words[k] >> 16);
  }
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = elements[r - RADIUS];
    row[RADIUS + VEC + r] = elements[VEC + r];
  }
#endif
}

// kperf_gather_window_global's window as element bits, where its rows read wide; false
// otherwise (the caller then takes the float path). Under li, window row dy is the mean of its
// row in win and its row in below (KPERF_BITS_BELOW_ELEMS) where mixes[dy] is set, as
// kperf_mix_row's select would take it; the caller mixes them.
inline bool kperf_gather_window_bits(KPERF_INPUT_PARAM in, int width, int height, ushort* win,
                                     ushort* below, bool* mixes, int group_y, int group_x,
                                     int row0, int col0) {
  const int gy0 = group_y * KPERF_GROUP_STEP_Y - RADIUS;
  const int gxo = group_x * KPERF_GROUP_STEP_X - KPERF_BLOCK_X_SHIFT + col0;  // first output column
  if (!kperf_wide_row_inside(width, gxo)) return false;
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    int ra, rb, mix;
    float wr;
    kperf_wide_row_source(group_y, row0, dy, &ra, &rb, &wr, &mix);
    kperf_read_window_row_bits(in, kperf_src_row(gy0 + ra, height) * width + gxo,
                               &win[dy * KPERF_WIN_W]);
    mixes[dy] = false;
#if RECON_LI
    if (ra != rb) {
      kperf_read_window_row_bits(in, kperf_src_row(gy0 + rb, height) * width + gxo,
                                 &below[dy * KPERF_WIN_W]);
      mixes[dy] = mix;
    }
#endif
  }
  return true;
}
#endif

// Elements col0 .. col0 + KPERF_WIN_W - 1 of row t of this group's tile, a row that is its own
// source, read from global memory (the global load path's kept rows).
inline void kperf_global_row(KPERF_INPUT_PARAM in, int width, int height, int t, int col0,
                             float* row) {
  const int gy = kperf_tile_origin_y() + t, gx = kperf_tile_origin_x() + col0;
#if KPERF_GLOBAL_VEC_ROWS
  if (kperf_wide_row_inside(width, gx + RADIUS)) {
    kperf_read_window_row(in, kperf_src_row(gy, height) * width + gx + RADIUS, row);
    return;
  }
#endif
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = kperf_load(in, width, height, gy, gx + dx);
}

// The global load path: no tile. Each window element is read from global memory where the
// scheme's tile would take its value from (kperf_scheme_row_source / _col_source), with the
// same reconstruction arithmetic, so every load path gives the same outputs. The window is the
// one whose first element is element (row0, col0) of the tile of group (group_y, group_x): this
// work-item's group, or a neighbour whose computed output this one needs.
inline void kperf_gather_window_global(KPERF_INPUT_PARAM in, int width, int height, float* win,
                                       int group_y, int group_x, int row0, int col0) {
  const int gy0 = group_y * KPERF_GROUP_STEP_Y - RADIUS;
  const int gx0 = group_x * KPERF_GROUP_STEP_X - KPERF_BLOCK_X_SHIFT - RADIUS;
#if KPERF_GLOBAL_VEC_ROWS
  // Where every column is its own source and the window's row lies inside the grid, each window
  // row is one aligned VEC-wide load of the outputs' own columns and RADIUS elements on each
  // side (neighbouring work-items' columns, which the caches serve): a few wide loads instead of
  // one narrow load per tap. The same sources and arithmetic as the general path below.
  const int gxo = gx0 + col0 + RADIUS;  // the window's first output column
  if (kperf_wide_row_inside(width, gxo)) {
#pragma unroll
    for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
      int ra, rb, mix;
      float wr;
      kperf_wide_row_source(group_y, row0, dy, &ra, &rb, &wr, &mix);
      float row[KPERF_WIN_W];
      kperf_read_window_row(in, kperf_src_row(gy0 + ra, height) * width + gxo, row);
#if RECON_LI
      if (ra != rb) {
        float below[KPERF_WIN_W];
        kperf_read_window_row(in, kperf_src_row(gy0 + rb, height) * width + gxo, below);
        kperf_mix_row(row, below, wr, mix);
      }
#endif
#pragma unroll
      for (int dx = 0; dx < KPERF_WIN_W; ++dx) win[dy * KPERF_WIN_W + dx] = row[dx];
    }
    return;
  }
#endif
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    int ra, rb;
    float wr;
    kperf_scheme_row_source(group_y, row0 + dy, &ra, &rb, &wr);
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
      int ca, cb;
      float wc;
      kperf_scheme_col_source(group_x, col0 + dx, &ca, &cb, &wc);
      float v = kperf_load(in, width, height, gy0 + ra, gx0 + ca);
#if RECON_LI  // every scheme rebuilds along one axis at most
      if (ca != cb) v = mad(wc, kperf_load(in, width, height, gy0 + ra, gx0 + cb) - v, v);
      if (ra != rb) v = mad(wr, kperf_load(in, width, height, gy0 + rb, gx0 + ca) - v, v);
#endif
      win[dy * KPERF_WIN_W + dx] = v;
    }
  }
}

// Declares the local tile at kernel scope and fills it, where the load path has one.
#if KPERF_LOAD_TILE
#define KPERF_TILE_FILL(in, width, height)                             \
  __local float kperf_tile[TILE_ELEMS] __attribute__((aligned(16))); \
  kperf_fill_tile(kperf_tile, in, width, height)
#else
#define KPERF_TILE_FILL(in, width, height)
#endif

// Fills float win[KPERF_WIN_H * KPERF_WIN_W] with a work-item's window by the selected load path.
#if KPERF_LOAD_TILE
#define KPERF_GATHER(win, in, width, height) \
  KPERF_TILE_FILL(in, width, height);        \
  kperf_gather_window(kperf_tile, win, kperf_item_row(0), kperf_item_col(0))
#else
#define KPERF_GATHER(win, in, width, height)                                              \
  kperf_gather_window_global(in, width, height, win, (int)get_group_id(1),               \
                             (int)get_group_id(0), kperf_item_row(0), kperf_item_col(0))
#endif

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

#endif  // KPERF_TILE_CL
