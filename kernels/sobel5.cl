// sobel5: gradient magnitude with smoothing [1 4 6 4 1] and derivative [-1 -2 0 2 1]
// (OpenCV ksize 5); gx derives along x, gy along y. Evaluated separably over each work-item's
// window: per window row the horizontal derivative and smoothing, shared by the PY outputs
// below it, then the vertical passes (about half the arithmetic of 2 x 25 taps). The horizontal passes
// are linear, so under rows:k li they run on kept rows only (KPERF_IMAGE_KERNEL_ROWS).
//
// @name sobel5
// @radius 2
// @metric me
// @summary 5x5 Sobel gradient magnitude
#define RADIUS 2
#include "kperf_tile.cl"

// Per output column of a window row: the horizontal derivative [-1 -2 0 2 1] at h[v] and the
// horizontal smoothing [1 4 6 4 1] at h[VEC + v].
inline void sobel5_row(const float* row, float* h) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    const float* c = &row[RADIUS + v];
    h[v] = (c[2] - c[-2]) + 2.0f * (c[1] - c[-1]);
    h[VEC + v] = (c[-2] + c[2]) + 4.0f * (c[-1] + c[1]) + 6.0f * c[0];
  }
}

inline void sobel5_cols(const float* h, float* result) {
#define SOBEL5_ROW (2 * VEC)  // numbers per window row
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* d = &h[(p + RADIUS) * SOBEL5_ROW + v];
      const float* s = d + VEC;
      const float gx = (d[-2 * SOBEL5_ROW] + d[2 * SOBEL5_ROW]) +
                       4.0f * (d[-SOBEL5_ROW] + d[SOBEL5_ROW]) + 6.0f * d[0];
      const float gy = (s[2 * SOBEL5_ROW] - s[-2 * SOBEL5_ROW]) + 2.0f * (s[SOBEL5_ROW] - s[-SOBEL5_ROW]);
      result[p * VEC + v] = sqrt(gx * gx + gy * gy);
    }
}

KPERF_IMAGE_KERNEL_ROWS(sobel5_row, sobel5_cols, 2 * VEC)
