// gaussian5: 5x5 binomial blur [1 4 6 4 1]^T [1 4 6 4 1] / 256 over the (perforated) local tile.
#define RADIUS 2
#include "kperf_tile.cl"

inline float gaussian5_point(const float* c) {
  const float w[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
  float sum = 0.0f;
#pragma unroll
  for (int dy = -2; dy <= 2; ++dy) {
    float row = 0.0f;
#pragma unroll
    for (int dx = -2; dx <= 2; ++dx) row = mad(w[dx + 2], KPERF_AT(c, dy, dx), row);
    sum = mad(w[dy + 2], row, sum);
  }
  return sum * (1.0f / 256.0f);
}

KPERF_IMAGE_KERNEL(gaussian5_point)
