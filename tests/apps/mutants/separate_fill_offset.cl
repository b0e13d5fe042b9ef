// separate_fill_offset: a 3x3 box mean that adds 0.5 to the outputs it computes when an output
// scheme's fill runs as a second launch (OUT_FUSED 0, the separate fill), a known-bad user app
// for `kperf check`'s output-fills check: the one-launch fills (fused, shared) and the two-launch
// one give different outputs. No other check runs an output scheme, so only the output-fills
// check fails (tests/app_mutants_test.py; docs/testing.md, "Known-bad kernels").
//
// @name separate_fill_offset
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean, 0.5 too high under the separate output fill (fails the output-fills check)
#define RADIUS 1
#include "kperf_tile.cl"

inline float separate_fill_offset_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
#if OUT_FUSED
  return sum * (1.0f / 9.0f);
#else
  return sum * (1.0f / 9.0f) + 0.5f;  // the mutation
#endif
}

KPERF_IMAGE_KERNEL(separate_fill_offset_point)
