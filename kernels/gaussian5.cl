// gaussian5: 5x5 binomial blur [1 4 6 4 1]^T [1 4 6 4 1] / 256 over the (perforated) local tile.
// Evaluated separably over each work-item's window: one horizontal pass per window row, shared
// by the PY outputs below it, then the vertical pass (about half the arithmetic of 25 taps).
//
// @name gaussian5
// @radius 2
// @metric mre
// @summary 5x5 binomial blur
#define RADIUS 2
#include "kperf_tile.cl"

inline void gaussian5_block(const float* win, float* result) {
  float h[KPERF_WIN_H * VEC];  // horizontal [1 4 6 4 1] of each window row, per output column
#pragma unroll
  for (int r = 0; r < KPERF_WIN_H; ++r)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &win[r * KPERF_WIN_W + RADIUS + v];
      h[r * VEC + v] = (c[-2] + c[2]) + 4.0f * (c[-1] + c[1]) + 6.0f * c[0];
    }
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &h[(p + RADIUS) * VEC + v];
      result[p * VEC + v] =
          ((c[-2 * VEC] + c[2 * VEC]) + 4.0f * (c[-VEC] + c[VEC]) + 6.0f * c[0]) * (1.0f / 256.0f);
    }
}

KPERF_IMAGE_KERNEL_BLOCK(gaussian5_block)
