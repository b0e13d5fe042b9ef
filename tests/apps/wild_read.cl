// wild_read: a 3x3 box mean whose point function also reads far outside its window, a kernel that
// faults the device (PoCL: SIGSEGV inside the driver; NVIDIA: an illegal address, then
// CL_INVALID_COMMAND_QUEUE). kperf run and tune must lose its configurations alone, and kperf
// check must name the fault (tests/fault_test.py).
//
// @name wild_read
// @radius 1
// @metric mre
// @summary 3x3 box mean plus one read 1.6 GB before its window (faults the device)
#define RADIUS 1
#include "kperf_tile.cl"

inline float wild_read_point(const float* c) {
  float sum = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) sum += KPERF_AT(c, dy, dx);
  return sum * (1.0f / 9.0f) + 0.0f * c[-400000000];
}

KPERF_IMAGE_KERNEL(wild_read_point)
