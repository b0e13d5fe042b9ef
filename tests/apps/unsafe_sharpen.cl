// unsafe_sharpen: 2 v - (3x3 box mean), a deliberately unsafe user app. It takes its window
// through the tile contract but reads the centre v straight from the global input buffer, around
// the contract: a perforated input scheme skips that element in the tile, not in this read, so
// poisoned skipped elements reach the output and `kperf check` must fail it.
//
// @name unsafe_sharpen
// @radius 1
// @metric mre
// @summary 2 v - box3, with v read around the tile contract (must fail kperf check)
#define RADIUS 1
#define KPERF_CALL(block_fn, win, result, y0, x0) block_fn(win, result, y0, x0, width, height, in)
#include "kperf_tile.cl"

inline void unsafe_sharpen_block(const float* win, float* result, int y0, int x0, int width,
                                 int height, KPERF_INPUT_PARAM in) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &win[(RADIUS + p) * KPERF_WIN_W + RADIUS + v];
      float box = 0.0f;
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx) box += KPERF_AT(c, dy, dx);
      const int y = clamp(y0 + p, 0, height - 1), x = clamp(x0 + v, 0, width - 1);
#if KPERF_LOAD_BUFFER
      const float centre = kperf_read_in(in, y * width + x);  // the unsafe read
#else
      const float centre = KPERF_AT(c, 0, 0);
#endif
      result[p * VEC + v] = 2.0f * centre - box * (1.0f / 9.0f);
    }
}

KPERF_IMAGE_KERNEL_BLOCK(unsafe_sharpen_block)
