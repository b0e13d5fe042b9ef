// box5: the mean of the 5x5 window, every tap weighted 1/25 (an example user app).
//
// @name box5
// @radius 2
// @metric mre
// @range 0 255
// @summary 5x5 box blur
#define RADIUS 2
#include "kperf_tile.cl"

inline float box5_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -2; dy <= 2; ++dy)
#pragma unroll
    for (int dx = -2; dx <= 2; ++dx) sum += KPERF_AT(c, dy, dx);
  return sum * (1.0f / 25.0f);
}

KPERF_IMAGE_KERNEL(box5_point)
