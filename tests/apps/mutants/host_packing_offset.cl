// host_packing_offset: a 3x3 box mean that adds 0.5 when the host packs the kept lines
// (--perforate host; perforate_host.cl defines KPERF_PACKED_ROWS), a known-bad user app for
// `kperf check`'s host-device check: its outputs depend on where perforation happens. No other
// check runs host perforation, so only the host-device check fails (tests/app_mutants_test.py;
// docs/testing.md, "Known-bad kernels").
//
// @name host_packing_offset
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean, 0.5 too high under host perforation (fails the host-device check)
#define RADIUS 1
#include "kperf_tile.cl"

inline float host_packing_offset_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
#ifdef KPERF_PACKED_ROWS
  return sum * (1.0f / 9.0f) + 0.5f;  // the mutation
#else
  return sum * (1.0f / 9.0f);
#endif
}

KPERF_IMAGE_KERNEL(host_packing_offset_point)
