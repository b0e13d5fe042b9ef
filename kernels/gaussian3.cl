// gaussian3: 3x3 binomial blur [1 2 1]^T [1 2 1] / 16 over the (perforated) local tile.
//
// @name gaussian3
// @radius 1
// @metric mre
// @summary 3x3 binomial blur
#define RADIUS 1
#include "kperf_tile.cl"

inline float gaussian3_point(const float* c) {
  const float top = KPERF_AT(c, -1, -1) + 2.0f * KPERF_AT(c, -1, 0) + KPERF_AT(c, -1, 1);
  const float mid = KPERF_AT(c, 0, -1) + 2.0f * KPERF_AT(c, 0, 0) + KPERF_AT(c, 0, 1);
  const float bot = KPERF_AT(c, 1, -1) + 2.0f * KPERF_AT(c, 1, 0) + KPERF_AT(c, 1, 1);
  return (top + 2.0f * mid + bot) * (1.0f / 16.0f);
}

KPERF_IMAGE_KERNEL(gaussian3_point)
