// range_overshoot: a 3x3 sharpen, 2 v - (box mean), that declares @range 0 255 but does not
// clamp, a known-bad user app for `kperf check`'s range check: on an input of 0..255 its
// accurate outputs overshoot both ends of the declared range. It is otherwise a correct app
// (its model, perforation, load paths, fills and runs all agree), so only the range check fails
// (tests/app_mutants_test.py; docs/testing.md, "Known-bad kernels").
//
// @name range_overshoot
// @radius 1
// @metric me
// @range 0 255
// @summary 3x3 sharpen without a clamp, outside its declared range (fails the range check)
#define RADIUS 1
#include "kperf_tile.cl"

inline float range_overshoot_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
  return 2.0f * KPERF_AT(c, 0, 0) - sum * (1.0f / 9.0f);  // no clamp to [0, 255]
}

KPERF_IMAGE_KERNEL(range_overshoot_point)
