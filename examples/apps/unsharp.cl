// unsharp: unsharp masking, v + AMOUNT (v - blur(v)) with the 3x3 binomial blur (an example user
// app with a parameter: kperf run --cl-options -DUNSHARP_AMOUNT=0.5f changes it).
//
// @name unsharp
// @radius 1
// @metric mre
// @summary unsharp mask: v + 1.5 (v - 3x3 binomial blur)
#define RADIUS 1
#include "kperf_tile.cl"

#ifndef UNSHARP_AMOUNT
#define UNSHARP_AMOUNT 1.5f
#endif

inline float unsharp_point(const float* c) {
  const float top = KPERF_AT(c, -1, -1) + 2.0f * KPERF_AT(c, -1, 0) + KPERF_AT(c, -1, 1);
  const float mid = KPERF_AT(c, 0, -1) + 2.0f * KPERF_AT(c, 0, 0) + KPERF_AT(c, 0, 1);
  const float bot = KPERF_AT(c, 1, -1) + 2.0f * KPERF_AT(c, 1, 0) + KPERF_AT(c, 1, 1);
  const float blur = (top + 2.0f * mid + bot) * (1.0f / 16.0f);
  const float v = KPERF_AT(c, 0, 0);
  return v + UNSHARP_AMOUNT * (v - blur);
}

KPERF_IMAGE_KERNEL(unsharp_point)
