// kperf fused chains, the rolling design (docs/pipelines.md, "Rolling fused chains"): one launch
// computes a chain of image apps, each work-group streaming down a column strip with a rolling
// window of rows per stage, so that no row of any stage is computed or loaded twice in a strip.
//
// The host writes the program's text (measure/fused_program.cpp) as for the tile design
// (fuse_contract.cl), with this file instead of fuse_contract.cl, fuse_roll_stage.cl instead of
// fuse_stage_end.cl after each stage's app file, and fuse_roll_kernel.cl's kernel; the strip
// height is the build option -DKPERF_FUSE_ROWS=H, the group's block width KPERF_ROLL_BLOCK_X.
//
// Geometry. A row of WG_X work-items streams a strip of KPERF_FUSE_ROWS rows by
// KPERF_ROLL_BLOCK_X columns of the last stage's outputs; a group's WG_Y rows of work-items stream
// WG_Y strips one below the other. Every stage computes WG_X * VEC columns per row, VEC per item:
// stage k from column x0 - KPERF_FUSE_HALO_k (the halo its outputs need), the last stage from x0,
// where the block's KPERF_ROLL_BLOCK_X columns (a multiple of 4 and of VEC, at most
// WG_X * VEC - 2 KPERF_FUSE_HALO_1) are stored and the rest of its columns are not. So item i of
// stage k + 1 reads its window from column i * VEC of stage k's row: every window row and every
// store of a stage is aligned, and every item computes one chunk per stage (no item computes the
// halo columns a second time, the cost a SIMT machine pays for the tile design's edge chunks).
//
// Steps. A step moves PY rows down: one barrier, then
//   - the global loads of the next PY input rows are issued (into registers: they travel while
//     the stages compute, and stay in flight PY rows deep);
//   - every stage k takes the PY rows stage k - 1 wrote in the step before (stage 1: the input
//     rows committed the step before), puts each through its app's row pass into a ring of its
//     last PY + 2 RADIUS rows of row-pass values held in registers, and computes PY output rows
//     from the ring with the app's column pass; it writes them into its own double-buffered ring
//     of PY rows in local memory (the last stage: into the output);
//   - the loaded rows are committed into the input ring.
// Every local slot written in a step is read in the next one, after its barrier, and rewritten
// only after another: one barrier per step, whatever the number of stages (each stage lags the one
// before it by one step). The apps' row and column passes are their own functions
// (fuse_stage_begin.cl: KPERF_IMAGE_KERNEL_ROWS' row_fn and col_fn; for other apps the row pass
// copies the window row and the column pass is the app's window function), so a separable app
// passes each new row once, not once per output row that reads it.
//
// Why the vertical window lives in registers and the rows in local memory, on NVIDIA: a window
// row needs the neighbouring items' columns, so each stage's new rows go through local memory
// once (aligned 16-byte reads, no bank conflicts); a local ring of the row-pass values would cost
// (PY + 2 RADIUS) 16-byte local reads per row instead of PY, and local memory bandwidth (128 bytes
// per clock per SM on Hopper) is what the tile design already spends most of. Registers cost
// 2 RADIUS x values moves per step and occupancy; at PY 2-4 both stay within what hides the
// global loads' latency (the estimate below).
//
// Edges. Past the grid's left and right edges an intermediate row holds the edge's value (the
// unfused chain reads its intermediate buffer clamped): the item computing a stage's column 0
// (width - 1) also writes its value into the halo columns before (after) it, and no item writes
// a column outside the grid. Above and below, a later stage's ring takes row 0's values for every
// row above it when row 0 arrives, and a row past the last its previous row's. The first stage
// reads the input clamped, as any app does.
//
// Perforation: rows:k of the first stage's input. Only the kept rows, (gy + r) mod k == 0 with r
// the first stage's radius (the unfused chain's rows), are loaded into the input ring; a skipped
// row is rebuilt from the kept rows above and below (nn or li, semantics §4) as the first stage
// reads it, over kept rows in [-r, height + r): the unfused chain's rows:k on a tile as tall as the
// grid, with no tile edges inside it. The first stage lags k - 1 rows more for the row below.
//
// Cost, gaussian5 > sobel3 at 8192^2 on an H200 (VEC 4, WG 32x1, PY 2, strips of 256 rows):
// - Bytes: a group loads 136 input columns for its 124 outputs, 262 rows for 256: 1.10 x 1.02 of
//   the grid read where the neighbours' columns miss the L2 (about 1.02 where they hit: strips side
//   by side move together), one write. About 2.04-2.12 grid moves against a copy's 2: 134-139 us
//   at the copy's 4.1 TB/s, 1.94-2.02x the unfused accurate chain (270 us).
// - Barriers: one per step, one per PY rows of a strip; a group of one warp waits for nothing.
// - Arithmetic per work-item per step (PY rows x 4 outputs): loads and commits ~10 PY, gaussian5
//   ~16 moves + 50 PY (3 local reads, row pass 16, column pass 20 per row), sobel3 ~16 moves +
//   ~60 PY (2 local reads, row pass 12, column pass with sqrt ~40), ~25 of step overhead: about
//   32 instructions per output at PY 2, 29 at PY 4 (the tile design: ~1.5x that, with 21 KiB of
//   local memory a group). 67 M outputs x 32 / 32 lanes over 132 SMs x 4 issue slots at 1.98 GHz
//   is 64 us of issue at full efficiency: at 45-55 % efficiency the issue time meets the DRAM
//   bound, so both matter; local memory: ~7 PY 16-byte accesses per warp-step, ~58 us of its
//   bandwidth, under the bound.
// - Registers ~100 (PY 2) to ~140 (PY 4): 20 or 14 warps per SM; the loads in flight per SM (PY
//   rows x 544 bytes per warp) reach the ~24 KB that 4.8 TB/s x 650 ns needs from PY 2 on.
// - Expected fastest: PY 2 or 4 at VEC 4, 32x1, strips of 256 rows (2144 groups: one wave at ~16
//   per SM; 128 rows doubles the strip-end overhead to ~8 % of the compute and 5 % of the reads,
//   512 leaves 8 groups per SM, too few loads in flight). Median instead of gaussian5 adds ~35 PY
//   of min/max per step.
#ifndef KPERF_FUSE_ROLL_CL
#define KPERF_FUSE_ROLL_CL

#if !defined(KPERF_FUSE_ROWS) || !defined(KPERF_ROLL_BLOCK_X) || !defined(KPERF_FUSE_HALO_1)
#error "a rolling fused program: -DKPERF_FUSE_ROWS=H and the text's KPERF_ROLL_BLOCK_X"
#endif
#if KPERF_FUSE_ROWS < 1 || KPERF_FUSE_ROWS % KPERF_FUSE_LAUNCH_PY
#error "KPERF_FUSE_ROWS: a strip of whole steps of PY rows"
#endif
#include "fuse_contract.cl"

#if defined(KPERF_LINES_ARE_ROWS) && KPERF_LINES_ARE_ROWS
#define KPERF_ROLL_PERFORATED 1
#define KPERF_ROLL_E (SKIP - 1)  // rows past a rebuilt row to its kept rows
#elif defined(KPERF_SCHEME_IS_ACCURATE)
#define KPERF_ROLL_PERFORATED 0
#define KPERF_ROLL_E 0
#else
#error "a rolling fused chain takes the accurate scheme or rows:k at its first stage"
#endif

#define KPERF_ROLL_H KPERF_FUSE_ROWS
#define KPERF_ROLL_R1 (KPERF_FUSE_HALO_0 - KPERF_FUSE_HALO_1)  // the first stage's radius
#define KPERF_ROLL_WV (WG_X * VEC)                             // columns a stage computes
#if KPERF_ROLL_BLOCK_X < 1 || KPERF_ROLL_BLOCK_X % 4 || KPERF_ROLL_BLOCK_X % VEC || \
    KPERF_ROLL_BLOCK_X + 2 * KPERF_FUSE_HALO_1 > KPERF_ROLL_WV
#error "KPERF_ROLL_BLOCK_X: a multiple of 4 and VEC, the halo beside it within WG_X * VEC"
#endif
// Steps the first stage lags for the kept row below a rebuilt one; steps from the first loaded
// row to the first input row the strip needs, and more; the first step whose last-stage rows are
// the strip's first; and the steps of a strip.
#define KPERF_ROLL_Q ((KPERF_ROLL_E + PY - 1) / PY)
#define KPERF_ROLL_D ((2 * KPERF_FUSE_HALO_0 + KPERF_ROLL_E + PY - 1) / PY)
#define KPERF_ROLL_FIRST_OUT (KPERF_FUSE_STAGES + KPERF_ROLL_Q + KPERF_ROLL_D)
#define KPERF_ROLL_STEPS (KPERF_ROLL_FIRST_OUT + KPERF_ROLL_H / PY)
// The input ring: rows of KPERF_ROLL_IN_W floats from the aligned column x0 - roundup4(halo),
// the first stage's item i reading from KPERF_ROLL_IN_LEAD + i VEC; 2 Q + 2 steps of PY rows.
#define KPERF_ROLL_IN_LEAD ((4 - KPERF_FUSE_HALO_0 % 4) % 4)
#define KPERF_ROLL_IN_W ((KPERF_ROLL_IN_LEAD + KPERF_ROLL_WV + 2 * KPERF_ROLL_R1 + 3) / 4 * 4)
#define KPERF_ROLL_IN_CHUNKS (KPERF_ROLL_IN_W / 4)
#define KPERF_ROLL_IN_ROUNDS ((KPERF_ROLL_IN_CHUNKS + WG_X - 1) / WG_X)
#define KPERF_ROLL_IN_ROWS ((2 * KPERF_ROLL_Q + 2) * PY)
#define KPERF_ROLL_IN_ELEMS (KPERF_ROLL_IN_ROWS * KPERF_ROLL_IN_W)
// Stage k's ring (k < the last): two steps of PY rows, wide enough for the next stage's windows.
#define KPERF_ROLL_INTER_W(halo) ((KPERF_ROLL_WV + 2 * (halo) + 3) / 4 * 4)
#define KPERF_ROLL_INTER_ELEMS(halo) (2 * PY * KPERF_ROLL_INTER_W(halo))

// Where a row of work-items stands: its strip's first row and its group's first column.
inline int kperf_roll_y0(void) {
  return ((int)get_group_id(1) * WG_Y + (int)get_local_id(1)) * KPERF_ROLL_H;
}
inline int kperf_roll_x0(void) { return (int)get_group_id(0) * KPERF_ROLL_BLOCK_X; }
// The strip's first loaded row (the first row of step 0's block).
inline int kperf_roll_first_row(int y0) {
  return y0 + KPERF_FUSE_HALO_0 - KPERF_ROLL_D * PY;
}

// a mod n in [0, n) for any a.
inline int kperf_roll_mod(int a, int n) {
  const int m = a % n;
  return m < 0 ? m + n : m;
}

// Whether input row y is loaded by the strip from y0: within the rows its outputs need (with the
// kept rows past them that rebuild the first and last) and kept.
inline bool kperf_roll_loads(int y, int y0) {
  if (y < y0 - KPERF_FUSE_HALO_0 - KPERF_ROLL_E ||
      y >= y0 + KPERF_ROLL_H + KPERF_FUSE_HALO_0 + KPERF_ROLL_E)
    return false;
#if KPERF_ROLL_PERFORATED
  return kperf_roll_mod(y + KPERF_ROLL_R1, SKIP) == 0;
#else
  return true;
#endif
}

// Input row y's row of the ring.
inline __local float* kperf_roll_in_row(__local float* ring, int y, int first) {
  return ring + kperf_roll_mod(y - first, KPERF_ROLL_IN_ROWS) * KPERF_ROLL_IN_W;
}

// Whether this group's input rows move as aligned 16-byte (8-byte for 16-bit storage) loads: the
// row segment inside the grid.
inline bool kperf_roll_vector_loads(int width) {
  const int xa = kperf_roll_x0() - (KPERF_FUSE_HALO_0 + KPERF_ROLL_IN_LEAD);
  return width % 4 == 0 && xa >= 0 && xa + KPERF_ROLL_IN_W <= width;
}

// Issues this work-item's loads of the PY input rows of step s (those the strip loads).
inline void kperf_roll_issue(float4* staged, KPERF_INPUT_PARAM in, int width, int height, int s,
                             int y0, bool vec) {
  const int first = kperf_roll_first_row(y0) + s * PY;
  const int xa = kperf_roll_x0() - (KPERF_FUSE_HALO_0 + KPERF_ROLL_IN_LEAD);
#pragma unroll
  for (int j = 0; j < PY; ++j) {
    const int y = first + j;
    if (!kperf_roll_loads(y, y0)) continue;
#pragma unroll
    for (int q = 0; q < KPERF_ROLL_IN_ROUNDS; ++q) {
      const int c = (int)get_local_id(0) + q * WG_X;
      if (c >= KPERF_ROLL_IN_CHUNKS) continue;
      const int x = xa + 4 * c;
      if (vec) {
        staged[j * KPERF_ROLL_IN_ROUNDS + q] =
            kperf_read_in4(in, KPERF_UDIV(clamp(y, 0, height - 1) * width + x, 4));
      } else {
        staged[j * KPERF_ROLL_IN_ROUNDS + q] = (float4)(
            kperf_load_buffer(in, width, height, y, x), kperf_load_buffer(in, width, height, y, x + 1),
            kperf_load_buffer(in, width, height, y, x + 2),
            kperf_load_buffer(in, width, height, y, x + 3));
      }
    }
  }
}

// Stores the loads of step s into the input ring.
inline void kperf_roll_commit(const float4* staged, __local float* ring, int s, int y0) {
  const int first = kperf_roll_first_row(y0);
#pragma unroll
  for (int j = 0; j < PY; ++j) {
    const int y = first + s * PY + j;
    if (!kperf_roll_loads(y, y0)) continue;
    __local float4* row = (__local float4*)kperf_roll_in_row(ring, y, first);
#pragma unroll
    for (int q = 0; q < KPERF_ROLL_IN_ROUNDS; ++q) {
      const int c = (int)get_local_id(0) + q * WG_X;
      if (c < KPERF_ROLL_IN_CHUNKS) row[c] = staged[j * KPERF_ROLL_IN_ROUNDS + q];
    }
  }
}

// Zeroes a local array: the rings' slots and columns no stage writes before they are read (the
// windows of columns and rows nobody stores) hold defined values.
inline void kperf_roll_clear(__local float* a, int n) {
  for (int i = kperf_local_linear_id(); i < n; i += WG_SIZE) a[i] = 0.0f;
}

// The output rows (from the strip's first) that stage k's step s computes: its new input rows'
// first, less its radius, where in_halo is the halo of its input (its radius and the later ones').
#define KPERF_ROLL_FEED_ROW(y0, s, stage, in_halo) \
  ((y0) + (in_halo) - (KPERF_ROLL_D + (stage) + KPERF_ROLL_Q) * PY + (s) * PY)

#endif  // KPERF_FUSE_ROLL_CL
