// sobel5: gradient magnitude with smoothing [1 4 6 4 1] and derivative [-1 -2 0 2 1]
// (OpenCV ksize 5); gx derives along x, gy along y.
#define RADIUS 2
#include "kperf_tile.cl"

inline float sobel5_point(const float* c) {
  const float smooth[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
  const float deriv[5] = {-1.0f, -2.0f, 0.0f, 2.0f, 1.0f};
  float gx = 0.0f;
  float gy = 0.0f;
#pragma unroll
  for (int dy = -2; dy <= 2; ++dy) {
#pragma unroll
    for (int dx = -2; dx <= 2; ++dx) {
      const float v = KPERF_AT(c, dy, dx);
      gx = mad(smooth[dy + 2] * deriv[dx + 2], v, gx);
      gy = mad(deriv[dy + 2] * smooth[dx + 2], v, gy);
    }
  }
  return sqrt(gx * gx + gy * gy);
}

KPERF_IMAGE_KERNEL(sobel5_point)
