// gaussian3: 3x3 binomial blur [1 2 1]^T [1 2 1] / 16 over the (perforated) local tile,
// evaluated separably: the horizontal pass of each window row, then the vertical one (the same
// operations as 9 taps written row by row; the linear row pass lets rows:k li run it on kept
// rows only, KPERF_IMAGE_KERNEL_ROWS).
//
// @name gaussian3
// @radius 1
// @metric mre
// @summary 3x3 binomial blur
#define RADIUS 1
#include "kperf_tile.cl"

// The horizontal [1 2 1] of a window row at each output column.
inline void gaussian3_row(const float* row, float* h) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) h[v] = row[v] + 2.0f * row[v + 1] + row[v + 2];
}

inline void gaussian3_cols(const float* h, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &h[p * VEC + v];
      result[p * VEC + v] = (c[0] + 2.0f * c[VEC] + c[2 * VEC]) * (1.0f / 16.0f);
    }
}

KPERF_IMAGE_KERNEL_ROWS(gaussian3_row, gaussian3_cols, VEC)
