// gaussian5: 5x5 binomial blur [1 4 6 4 1]^T [1 4 6 4 1] / 256 over the (perforated) local tile.
// Evaluated separably over each work-item's window: one horizontal pass per window row, shared
// by the PY outputs below it, then the vertical pass (about half the arithmetic of 25 taps). The horizontal pass is linear,
// so under rows:k li it runs on kept rows only (KPERF_IMAGE_KERNEL_ROWS).
//
// @name gaussian5
// @radius 2
// @metric mre
// @summary 5x5 binomial blur
#define RADIUS 2
#include "kperf_tile.cl"

// The horizontal [1 4 6 4 1] of a window row at each output column.
inline void gaussian5_row(const float* row, float* h) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    const float* c = &row[RADIUS + v];
    h[v] = (c[-2] + c[2]) + 4.0f * (c[-1] + c[1]) + 6.0f * c[0];
  }
}

inline void gaussian5_cols(const float* h, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &h[(p + RADIUS) * VEC + v];
      result[p * VEC + v] =
          ((c[-2 * VEC] + c[2 * VEC]) + 4.0f * (c[-VEC] + c[VEC]) + 6.0f * c[0]) * (1.0f / 256.0f);
    }
}

KPERF_IMAGE_KERNEL_ROWS(gaussian5_row, gaussian5_cols, VEC)
