// Output fill "shared": one launch, as the fused fill, with each computed output computed once
// per work-group. Under the fused fill a work-item computes, besides its own computed lines, the
// neighbours' lines its copies and interpolations read (under li the next computed row, and along
// x the computed columns either side of its own: vec + 2 windows for 3 vec outputs under cols:3).
// Here a work-item computes only its own; the group computes the lines past its block that its
// work-items read (the column left of the block, the one right of it and the next block's first
// computed row, as the fused fill needs them), spread over its work-items, keeps them all in local
// memory and, after one barrier, each work-item writes what the fused fill writes, from there.
// The stores are the fused fill's code on the same values: outputs equal the fused fill's bit for
// bit. What it buys is arithmetic (the period's share of windows instead of vec + 2 of vec); what
// it costs is a barrier and a pass through local memory.
// Along y under li on a tile that does not depend on the group (the accurate input), the host
// overlaps the blocks by one computed row instead (KPERF_OVERLAP_Y, kperf_tile.cl): the next
// block's first computed row is then the group's own last, computed by its last work-items with
// their other rows, so no work-item computes a second round before the barrier; and along x by
// whole work-items (KPERF_OVERLAP_X): the group's first and last work-items compute the columns
// either side of the others' and store nothing. Where the next
// block's first row is computed past the block, the work-items that compute it do twice the
// windows of the others, and at sizes where a group's time is its longest work-item that is what
// the group takes.
#define KPERF_FILL_SHARED 1
#include "output_fill_fused.cl"

#define KPERF_OUT_CQY OUT_PY
#define KPERF_OUT_CQX OUT_VEC
#define KPERF_OUT_ITEM_PREV_X 0

// The group's computed outputs: KPERF_GRID_NY x KPERF_GRID_NX points of PY x VEC values. Point
// (gy, gx) is block-local computed row gy and computed column gx - KPERF_OUT_PREV_X: its
// work-items' own, the columns either side of them and the next block's first computed row.
#define KPERF_GRID_OWN_Y (WG_Y * OUT_PY)
#define KPERF_GRID_OWN_X (WG_X * OUT_VEC)
#define KPERF_GRID_SIDES (KPERF_OUT_PREV_X + KPERF_OUT_NEXT_X)
#define KPERF_GRID_NY (KPERF_GRID_OWN_Y + KPERF_OUT_NEXT_Y)
#define KPERF_GRID_NX (KPERF_GRID_OWN_X + KPERF_GRID_SIDES)
#define KPERF_GRID_POINT (PY * VEC)
#define KPERF_GRID_EXTRA (KPERF_GRID_SIDES * KPERF_GRID_OWN_Y + KPERF_OUT_NEXT_Y * KPERF_GRID_NX)
#define KPERF_GRID_AT(grid, gy, gx) ((grid) + ((gy) * KPERF_GRID_NX + (gx)) * KPERF_GRID_POINT)

// Point e of the ones no work-item owns: first the side columns of each own row, then the next
// block's first computed row.
inline void kperf_grid_extra_point(int e, int* gy, int* gx) {
#if KPERF_GRID_SIDES
  if (e < KPERF_GRID_SIDES * KPERF_GRID_OWN_Y) {
    *gy = e / KPERF_GRID_SIDES;
    *gx = KPERF_OUT_PREV_X && e % KPERF_GRID_SIDES == 0 ? 0 : KPERF_GRID_NX - 1;
    return;
  }
  e -= KPERF_GRID_SIDES * KPERF_GRID_OWN_Y;
#endif
  *gy = KPERF_GRID_NY - 1;
  *gx = e;
}

inline void kperf_grid_put(__local float* at, const float* values) {
#if KPERF_GRID_POINT % 4 == 0
#pragma unroll
  for (int i = 0; i < KPERF_GRID_POINT / 4; ++i) vstore4(vload4(i, values), i, at);
#else
#pragma unroll
  for (int i = 0; i < KPERF_GRID_POINT; ++i) at[i] = values[i];
#endif
}

inline void kperf_grid_get(const __local float* at, float* values) {
#if KPERF_GRID_POINT % 4 == 0
#pragma unroll
  for (int i = 0; i < KPERF_GRID_POINT / 4; ++i) vstore4(vload4(i, at), i, values);
#else
#pragma unroll
  for (int i = 0; i < KPERF_GRID_POINT; ++i) values[i] = at[i];
#endif
}

// A work-item's own computed outputs (vals: OUT_PY x OUT_VEC points) into the grid.
inline void kperf_grid_put_own(__local float* grid, const float* vals) {
  const int gy0 = (int)get_local_id(1) * OUT_PY;
  const int gx0 = KPERF_OUT_PREV_X + (int)get_local_id(0) * OUT_VEC;
#pragma unroll
  for (int qy = 0; qy < OUT_PY; ++qy)
#pragma unroll
    for (int qx = 0; qx < OUT_VEC; ++qx)
      kperf_grid_put(KPERF_GRID_AT(grid, gy0 + qy, gx0 + qx),
                     &vals[(qy * OUT_VEC + qx) * KPERF_GRID_POINT]);
}

// The computed outputs the fused fill stores from (KPERF_OUT_NQY x KPERF_OUT_NQX points, from its
// left neighbour's last column), out of the grid. Under overlapping blocks the points past the
// grid's edges are those of work-items that store nothing from them (clamped, never used).
inline void kperf_grid_get_fused(const __local float* grid, float* vals) {
  const int gy0 = (int)get_local_id(1) * OUT_PY;
  const int gx0 = (int)get_local_id(0) * OUT_VEC + KPERF_OUT_PREV_X - KPERF_OUT_READS_PREV_X;
#pragma unroll
  for (int qy = 0; qy < KPERF_OUT_NQY; ++qy)
#pragma unroll
    for (int qx = 0; qx < KPERF_OUT_NQX; ++qx)
      kperf_grid_get(KPERF_GRID_AT(grid, min(gy0 + qy, KPERF_GRID_NY - 1),
                                   clamp(gx0 + qx, 0, KPERF_GRID_NX - 1)),
                     &vals[(qy * KPERF_OUT_NQX + qx) * KPERF_GRID_POINT]);
}

// At kernel scope (the grid is __local): the own outputs in, the group's other points computed
// and in, one barrier, then the fused fill's stores. Padded work-items reach the barrier too.
#define KPERF_OUT_FINISH(block_fn, in, out, width, height, vals)                                 \
  __local float kperf_grid[KPERF_GRID_NY * KPERF_GRID_NX * KPERF_GRID_POINT]                     \
      __attribute__((aligned(16)));                                                              \
  kperf_grid_put_own(kperf_grid, vals);                                                          \
  for (int kperf_e = kperf_local_linear_id(); kperf_e < KPERF_GRID_EXTRA; kperf_e += WG_SIZE) {  \
    int kperf_gy, kperf_gx;                                                                      \
    kperf_grid_extra_point(kperf_e, &kperf_gy, &kperf_gx);                                       \
    float kperf_point[KPERF_GRID_POINT];                                                         \
    KPERF_OUT_COMPUTE_AT(block_fn, in, width, height, kperf_point,                               \
                         kperf_gy * PY * OUT_KY + OUT_KY / 2,                                    \
                         (kperf_gx - KPERF_OUT_PREV_X) * VEC * OUT_KX + OUT_KX / 2);              \
    kperf_grid_put(KPERF_GRID_AT(kperf_grid, kperf_gy, kperf_gx), kperf_point);                  \
  }                                                                                              \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
  float kperf_fill_vals[KPERF_OUT_NQY * KPERF_OUT_NQX * KPERF_GRID_POINT];                       \
  kperf_grid_get_fused(kperf_grid, kperf_fill_vals);                                             \
  kperf_output_store(out, width, height, kperf_fill_vals)
