// sobel5: gradient magnitude with smoothing [1 4 6 4 1] and derivative [-1 -2 0 2 1]
// (OpenCV ksize 5); gx derives along x, gy along y. Evaluated separably over each work-item's
// window: per window row the horizontal derivative and smoothing, shared by the PY outputs
// below it, then the vertical passes (about half the arithmetic of 2 x 25 taps).
//
// @name sobel5
// @radius 2
// @metric me
// @summary 5x5 Sobel gradient magnitude
#define RADIUS 2
#include "kperf_tile.cl"

inline void sobel5_block(const float* win, float* result) {
  float dx[KPERF_WIN_H * VEC];  // horizontal [-1 -2 0 2 1] per window row and output column
  float sx[KPERF_WIN_H * VEC];  // horizontal [1 4 6 4 1]
#pragma unroll
  for (int r = 0; r < KPERF_WIN_H; ++r)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &win[r * KPERF_WIN_W + RADIUS + v];
      dx[r * VEC + v] = (c[2] - c[-2]) + 2.0f * (c[1] - c[-1]);
      sx[r * VEC + v] = (c[-2] + c[2]) + 4.0f * (c[-1] + c[1]) + 6.0f * c[0];
    }
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* d = &dx[(p + RADIUS) * VEC + v];
      const float* s = &sx[(p + RADIUS) * VEC + v];
      const float gx = (d[-2 * VEC] + d[2 * VEC]) + 4.0f * (d[-VEC] + d[VEC]) + 6.0f * d[0];
      const float gy = (s[2 * VEC] - s[-2 * VEC]) + 2.0f * (s[VEC] - s[-VEC]);
      result[p * VEC + v] = sqrt(gx * gx + gy * gy);
    }
}

KPERF_IMAGE_KERNEL_BLOCK(sobel5_block)
