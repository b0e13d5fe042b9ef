// image_path_offset: a 3x3 box mean that adds 0.5 on the image load path, a known-bad user app
// for `kperf check`'s load-paths check: its outputs depend on how the input is read. The local
// and global paths (the model's truth is the global one) agree, and nothing else looks at the
// image path, so only the load-paths check fails (tests/app_mutants_test.py; docs/testing.md,
// "Known-bad kernels").
//
// @name image_path_offset
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean, 0.5 too high on the image load path (fails the load-paths check)
#define RADIUS 1
#include "kperf_tile.cl"

inline float image_path_offset_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
#if KPERF_LOAD_BUFFER
  return sum * (1.0f / 9.0f);
#else
  return sum * (1.0f / 9.0f) + 0.5f;  // the mutation
#endif
}

KPERF_IMAGE_KERNEL(image_path_offset_point)
