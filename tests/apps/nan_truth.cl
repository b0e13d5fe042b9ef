// nan_truth: a 3x3 box mean that is 0/0 (NaN) wherever its centre is above 128, a user app whose
// own truth is broken: its fp64 truth kernel computes the same NaN on a finite input. Every row
// of it must be reference_failed, counting those elements, never ok (SPEC 15; tests/user_apps_test.py
// and tests/pipeline_tests.cpp).
//
// @name nan_truth
// @radius 1
// @metric mre
// @summary 3x3 box mean, NaN (0/0) where the centre is above 128 (a broken truth)
#define RADIUS 1
#include "kperf_tile.cl"

inline float nan_truth_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
  const float centre = KPERF_AT(c, 0, 0);
  const float zero = centre - centre;
  return centre > 128.0f ? zero / zero : sum * (1.0f / 9.0f);
}

KPERF_IMAGE_KERNEL(nan_truth_point)
