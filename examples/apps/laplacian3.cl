// laplacian3: the 4-neighbour discrete Laplacian, up + down + left + right - 4 centre (an example
// user app). Its outputs cross zero, so its primary metric is the range-normalised error (me).
//
// @name laplacian3
// @radius 1
// @metric me
// @range -1020 1020
// @summary 3x3 Laplacian (4-neighbour)
#define RADIUS 1
#include "kperf_tile.cl"

inline float laplacian3_point(const float* c) {
  return (KPERF_AT(c, -1, 0) + KPERF_AT(c, 1, 0)) + (KPERF_AT(c, 0, -1) + KPERF_AT(c, 0, 1)) -
         4.0f * KPERF_AT(c, 0, 0);
}

KPERF_IMAGE_KERNEL(laplacian3_point)
