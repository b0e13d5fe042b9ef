// Before one stage's app file in a fused program (fuse_contract.cl): the stage's view of the tile
// contract. The host defines, for stage KPERF_FUSE_STAGE (from 1):
//   KPERF_FUSE_STAGE_VEC, _PY      the outputs one call of its window function computes (the last
//                                  stage: the launch's VEC and PY; earlier ones: their chunks)
//   KPERF_FUSE_STAGE_RADIUS        its manifest's @radius (its file must define RADIUS so)
//   KPERF_FUSE_STAGE_HALO          the radii of the stages after it (its outputs' halo)
//   KPERF_FUSE_STAGE_IN_HALF       1 where every element its windows read is a half value
//   KPERF_FUSE_STAGE_OUT_HALF      1 where its outputs are rounded to half and used as they are
//   KPERF_FUSE_STAGE_RECON_LI      1 where its window elements may be interpolated (the first
//                                  stage under an li input scheme)
//   KPERF_FUSE_STAGE_ROUND         how its outputs are handed on: 0 as floats, 1 rounded to half,
//                                  2 rounded as this program's outputs are (bf16 throughout)
// An app's macros and functions then see its own shape (VEC, PY, RADIUS, KPERF_WIN_W...), and
// its kernel macro (KPERF_IMAGE_KERNEL, _ROWS, _BLOCK) defines the stage's window function
// kperf_fuse_block_K(const float* win, float* result) instead of a kernel. The app's own
// file-scope names carry a per-stage prefix (the host #defines them), so one app may be two
// stages. Not include-guarded: once per stage.
#undef RADIUS
#undef VEC
#undef PY
#define VEC KPERF_FUSE_STAGE_VEC
#define PY KPERF_FUSE_STAGE_PY

// What an app may test about the elements it reads and the outputs it writes (median's packed
// selection is exact only on half values, or on outputs rounded to half as they are).
#undef KPERF_IN_HALF
#undef KPERF_OUT_HALF
#if KPERF_FUSE_STAGE_IN_HALF
#define KPERF_IN_HALF 1
#endif
#if KPERF_FUSE_STAGE_OUT_HALF
#define KPERF_OUT_HALF 1
#endif
#undef RECON_LI
#define RECON_LI KPERF_FUSE_STAGE_RECON_LI
// Windows come from local memory and the app's kernel is not built: no app's own kernel path
// (inversion's direct accurate kernel, median's selection on stored bits) applies.
#undef KPERF_SCHEME_IS_ACCURATE
#undef KPERF_GLOBAL_BITS_ROWS

// The value an output is handed on as: rounded as the unfused chain would store it.
inline float KPERF_FUSE_CAT(kperf_fuse_hand_on_, KPERF_FUSE_STAGE)(float v) {
#if KPERF_FUSE_STAGE_ROUND == 1
  return kperf_fuse_round_half(v);
#elif KPERF_FUSE_STAGE_ROUND == 2
  return kperf_round_out(v);
#else
  return v;
#endif
}

// What each kernel macro defines, under stage-numbered names: the tile design's window function
// kperf_fuse_block_K, and the rolling design's (fuse_roll.cl) row pass kperf_fuse_row_pass_K (one
// window row to kperf_fuse_values_K numbers) and column pass kperf_fuse_col_pass_K (KPERF_WIN_H
// rows of them to the PY x VEC outputs). An app declared with a row and a column pass has them
// as its own; any other's row pass is the window row itself and its column pass its window
// function.
#define KPERF_FUSE_WINDOW_FN(block_fn)                                                        \
  inline void KPERF_FUSE_CAT(kperf_fuse_block_, KPERF_FUSE_STAGE)(const float* win,           \
                                                                  float* result) {            \
    block_fn(win, result);                                                                    \
  }
#define KPERF_FUSE_ROLL_FNS(row_fn, col_fn, values)                                           \
  enum { KPERF_FUSE_CAT(kperf_fuse_values_, KPERF_FUSE_STAGE) = (values) };                   \
  inline void KPERF_FUSE_CAT(kperf_fuse_row_pass_, KPERF_FUSE_STAGE)(const float* row,        \
                                                                     float* h) {              \
    row_fn(row, h);                                                                           \
  }                                                                                           \
  inline void KPERF_FUSE_CAT(kperf_fuse_col_pass_, KPERF_FUSE_STAGE)(const float* h,          \
                                                                     float* result) {         \
    col_fn(h, result);                                                                        \
  }

#undef KPERF_IMAGE_KERNEL_BLOCK
#define KPERF_IMAGE_KERNEL_BLOCK(block_fn)                                                    \
  KPERF_FUSE_WINDOW_FN(block_fn)                                                              \
  inline void KPERF_FUSE_CAT(kperf_fuse_copy_row_, KPERF_FUSE_STAGE)(const float* row,        \
                                                                     float* h) {              \
    _Pragma("unroll") for (int i = 0; i < KPERF_WIN_W; ++i) h[i] = row[i];                    \
  }                                                                                           \
  KPERF_FUSE_ROLL_FNS(KPERF_FUSE_CAT(kperf_fuse_copy_row_, KPERF_FUSE_STAGE), block_fn,       \
                      KPERF_WIN_W)

// As kperf_kernels.cl's, under stage-numbered names (its names paste the app's, which would
// repeat where one app is two stages).
#undef KPERF_IMAGE_KERNEL
#define KPERF_IMAGE_KERNEL(point_fn)                                                          \
  inline void KPERF_FUSE_CAT(kperf_fuse_points_, KPERF_FUSE_STAGE)(const float* win,          \
                                                                   float* result) {           \
    _Pragma("unroll") for (int p = 0; p < PY; ++p)                                            \
    _Pragma("unroll") for (int v = 0; v < VEC; ++v) result[p * VEC + v] =                     \
        point_fn(&win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v]);                              \
  }                                                                                           \
  KPERF_IMAGE_KERNEL_BLOCK(KPERF_FUSE_CAT(kperf_fuse_points_, KPERF_FUSE_STAGE))

#undef KPERF_IMAGE_KERNEL_ROWS
#define KPERF_IMAGE_KERNEL_ROWS(row_fn, col_fn, values)                                       \
  inline void KPERF_FUSE_CAT(kperf_fuse_rows_, KPERF_FUSE_STAGE)(const float* win,            \
                                                                 float* result) {             \
    float h[KPERF_WIN_H * (values)];                                                          \
    _Pragma("unroll") for (int r = 0; r < KPERF_WIN_H; ++r)                                   \
      row_fn(&win[r * KPERF_WIN_W], &h[r * (values)]);                                        \
    col_fn(h, result);                                                                        \
  }                                                                                           \
  KPERF_FUSE_WINDOW_FN(KPERF_FUSE_CAT(kperf_fuse_rows_, KPERF_FUSE_STAGE))                    \
  KPERF_FUSE_ROLL_FNS(row_fn, col_fn, values)
