// kperf fused chains (docs/pipelines.md, "Fused chains"): one launch computes a chain of image
// apps, each earlier stage's outputs kept in local memory over the later stages' tile and halo.
//
// The host writes the program's text (measure/fused_program.cpp): the chain's geometry
// (KPERF_FUSE_STAGES, KPERF_FUSE_HALO_k), this file, then each stage's app file between
// fuse_stage_begin.cl and fuse_stage_end.cl with that stage's view of the contract, then the kernel
// from fuse_kernel.cl's macros. The apps are the same files `kperf run` builds: an app's window
// function is called here on windows gathered from a local array instead of its own tile.
//
// A work-group owns a BLOCK_X x BLOCK_Y block of the last stage's outputs (the launch shape, as in
// kperf_tile.cl). Stage k computes its outputs over that block plus a halo of KPERF_FUSE_HALO_k,
// the radii of the stages after it (0 for the last stage), so stage k reads a halo of
// KPERF_FUSE_HALO_(k-1). The first stage's input is kperf_tile.cl's tile of the block with a halo
// of every stage's radius (RADIUS = KPERF_FUSE_HALO_0), filled by that file's machinery under the
// first stage's input axes (input scheme, storage precision): the scheme's kept lines are those of
// this tile, as for any tile (semantics §4).
#ifndef KPERF_FUSE_CONTRACT_CL
#define KPERF_FUSE_CONTRACT_CL

#if !defined(KPERF_FUSE_STAGES) || !defined(KPERF_FUSE_HALO_0) || !defined(KPERF_FUSE_LAUNCH_VEC)
#error "a fused program's text defines KPERF_FUSE_STAGES and KPERF_FUSE_HALO_k (fused_program.cpp)"
#endif

#define KPERF_FUSE_CAT_(a, b) a##b
#define KPERF_FUSE_CAT(a, b) KPERF_FUSE_CAT_(a, b)

#define RADIUS KPERF_FUSE_HALO_0
#define VEC KPERF_FUSE_LAUNCH_VEC
#define PY KPERF_FUSE_LAUNCH_PY
// Every tile row is rebuilt in local memory before any stage-1 window reads it, so a window of any
// shape at any place of the tile reads it directly (perforate_lines.cl).
#ifndef KPERF_MATERIALIZE_ROWS
#define KPERF_MATERIALIZE_ROWS 1
#endif
#include "kperf_tile.cl"
#if OUT_KY != 1 || OUT_KX != 1 || !KPERF_LOAD_TILE || KPERF_PIPELINE_BLOCKS != 1
#error "a fused chain: no output scheme, the local load path, one block per group"
#endif

// The tile's and the block's geometry, frozen here: the stages' views redefine RADIUS, VEC and PY.
enum {
  kperf_fuse_block_x = BLOCK_X,
  kperf_fuse_block_y = BLOCK_Y,
  kperf_fuse_tile_stride = TILE_STRIDE,
  kperf_fuse_tile_off = TILE_OFF,
  kperf_fuse_tile_elems = TILE_ELEMS,
  kperf_fuse_tile_vec4 = KPERF_VEC_ROWS  // tile rows 16-byte aligned
};

// A stage's output region with a halo of `halo` in local memory: its rows and their stride (a
// multiple of 4 floats, so rows stay 16-byte aligned).
#define KPERF_FUSE_INTER_H(halo) (kperf_fuse_block_y + 2 * (halo))
#define KPERF_FUSE_INTER_STRIDE(halo) ((kperf_fuse_block_x + 2 * (halo) + 3) / 4 * 4)

// Under rows:k the tile's missing rows are rebuilt as whole float4 rows, padding columns too
// (perforate_lines.cl). A group whose rows are not loaded as aligned vectors (at the grid's edge)
// leaves its padding columns unset: they are zeroed first, so no rebuilt value comes from memory
// never written (what is there is never read as a tile element).
inline void kperf_fuse_clear_padding(__local float* tile, int width) {
#if KPERF_VEC_ROWS && defined(KPERF_LINES_ARE_ROWS) && KPERF_LINES_ARE_ROWS
  if (kperf_rows_vectorizable(width)) return;
  const int pad = TILE_STRIDE - TILE_W;  // 0 where the halo is the padding
  for (int i = kperf_local_linear_id(); i < TILE_H * pad; i += WG_SIZE) {
    const int row = i / max(pad, 1), c = i - row * pad;
    tile[row * TILE_STRIDE + (c < TILE_OFF ? c : TILE_W + c)] = 0.0f;
  }
#endif
}

// The value a float holds once stored as half (round to nearest even): an intermediate the
// unfused chain would hand on in half storage (f16 between the stages), whatever this program's
// output type.
inline float kperf_fuse_round_half(float v) {
  ushort bits;
  vstore_half_rte(v, 0, (__private half*)&bits);
  return vload_half(0, (__private const half*)&bits);
}

#endif  // KPERF_FUSE_CONTRACT_CL
