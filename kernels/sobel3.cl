// sobel3: gradient magnitude sqrt(gx^2 + gy^2); gx smooths [1 2 1] along y and derives
// [-1 0 1] along x, gy is its transpose.
//
// @name sobel3
// @radius 1
// @metric me
// @summary 3x3 Sobel gradient magnitude
#define RADIUS 1
#include "kperf_tile.cl"

inline float sobel3_point(const float* c) {
  const float gx = (KPERF_AT(c, -1, 1) - KPERF_AT(c, -1, -1)) +
                   2.0f * (KPERF_AT(c, 0, 1) - KPERF_AT(c, 0, -1)) +
                   (KPERF_AT(c, 1, 1) - KPERF_AT(c, 1, -1));
  const float gy = (KPERF_AT(c, 1, -1) - KPERF_AT(c, -1, -1)) +
                   2.0f * (KPERF_AT(c, 1, 0) - KPERF_AT(c, -1, 0)) +
                   (KPERF_AT(c, 1, 1) - KPERF_AT(c, -1, 1));
  return sqrt(gx * gx + gy * gy);
}

KPERF_IMAGE_KERNEL(sobel3_point)
