// wild_read: a 3x3 box mean that also reads its input 1.6 GB before the buffer, a kernel that
// faults the device (PoCL: SIGSEGV inside the driver; NVIDIA: an illegal address, then
// CL_INVALID_COMMAND_QUEUE and CL_OUT_OF_RESOURCES). kperf run and tune must lose its
// configurations alone, and kperf check must name the fault (tests/fault_test.py). On the image
// load path, which has no buffer to read around, it reads as far before its window instead.
//
// @name wild_read
// @radius 1
// @metric mre
// @summary 3x3 box mean plus one read 1.6 GB before its input (faults the device)
#define RADIUS 1
#define KPERF_CALL(block_fn, win, result, y0, x0) block_fn(win, result, y0, x0, width, in)
#include "kperf_tile.cl"

inline void wild_read_block(const float* win, float* result, int y0, int x0, int width,
                            KPERF_INPUT_PARAM in) {
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
#if KPERF_LOAD_BUFFER
      const float wild = kperf_read_in(in, (y0 + p) * width + x0 + v - 400000000);
#else
      const float wild = c[-400000000];
#endif
      result[p * VEC + v] = box * (1.0f / 9.0f) + 0.0f * wild;
    }
}

KPERF_IMAGE_KERNEL_BLOCK(wild_read_block)
