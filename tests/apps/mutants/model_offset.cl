// model_offset: a 3x3 box mean that adds 0.5 to every output of an input scheme (stencil,
// rows:k, cols:k), a known-bad user app for `kperf check`'s model check: its perforated outputs
// are not what the CPU tile model of their scheme gives (the truth kernel on the tiles the scheme
// builds), while its accurate outputs are right. It reads only through the tile contract and
// adds the same 0.5 on every load path, perforation site and run, so every other check passes
// (tests/app_mutants_test.py; docs/testing.md, "Known-bad kernels").
//
// @name model_offset
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean, 0.5 too high under input schemes (fails the model check)
#define RADIUS 1
#include "kperf_tile.cl"

inline float model_offset_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
#ifdef KPERF_SCHEME_IS_ACCURATE
  return sum * (1.0f / 9.0f);
#else
  return sum * (1.0f / 9.0f) + 0.5f;  // the mutation
#endif
}

KPERF_IMAGE_KERNEL(model_offset_point)
