// poison_zero_weight: a 3x3 box mean plus 0 times its centre read straight from the input
// buffer, a known-bad user app for `kperf check`'s poison check: a skipped element used with a
// zero weight. On a finite input the term is 0, so the outputs, the model, the load paths (the
// read goes through the perforation site's packing, kperf_load_buffer) and host perforation all
// agree; but the read skips the tile contract, so a perforated scheme's skipped element set to
// NaN reaches the output (0 x NaN = NaN). Only the poison check fails
// (tests/app_mutants_test.py; docs/testing.md, "Known-bad kernels").
//
// @name poison_zero_weight
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean + 0 x a centre read around the tile (fails the poison check)
#define RADIUS 1
#define KPERF_CALL(block_fn, win, result, y0, x0) \
  block_fn(win, result, y0, x0, width, height, in)
#include "kperf_tile.cl"

inline void poison_zero_weight_block(const float* win, float* result, int y0, int x0, int width,
                                     int height, KPERF_INPUT_PARAM in) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v];
      float sum = 0.0f;
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
#if KPERF_LOAD_BUFFER
      // The mutation: an element the scheme may skip, read around the tile.
      sum += 0.0f * kperf_load_buffer(in, width, height, y0 + p, x0 + v);
#endif
      result[p * VEC + v] = sum * (1.0f / 9.0f);
    }
}

KPERF_IMAGE_KERNEL_BLOCK(poison_zero_weight_block)
