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


// The rest of the contract, by concern: windows (load paths), outputs (output schemes and their
// fills), and the kernel macros.
#include "kperf_windows.cl"
#include "kperf_outputs.cl"
#include "kperf_kernels.cl"

#endif  // KPERF_TILE_CL
