// sobel3: gradient magnitude sqrt(gx^2 + gy^2); gx smooths [1 2 1] along y and derives
// [-1 0 1] along x, gy is its transpose. Evaluated separably: per window row the horizontal
// derivative and smoothing, then the vertical passes; the row passes are linear, so under
// rows:k li they run on kept rows only (KPERF_IMAGE_KERNEL_ROWS).
//
// @name sobel3
// @radius 1
// @metric me
// @summary 3x3 Sobel gradient magnitude
#define RADIUS 1
#include "kperf_tile.cl"

// Per output column of a window row: the horizontal derivative [-1 0 1] at h[v] and the
// horizontal smoothing [1 2 1] at h[VEC + v].
inline void sobel3_row(const float* row, float* h) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    h[v] = row[v + 2] - row[v];
    h[VEC + v] = row[v] + 2.0f * row[v + 1] + row[v + 2];
  }
}

inline void sobel3_cols(const float* h, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* d = &h[p * 2 * VEC + v];
      const float* s = d + VEC;
      const float gx = d[0] + 2.0f * d[2 * VEC] + d[4 * VEC];
      const float gy = s[4 * VEC] - s[0];
      result[p * VEC + v] = sqrt(gx * gx + gy * gy);
    }
}

KPERF_IMAGE_KERNEL_ROWS(sobel3_row, sobel3_cols, 2 * VEC)
