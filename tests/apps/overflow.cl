// overflow: the centre value, scaled up by 1e60 and back down, a user app whose float outputs
// are non-finite where its fp64 truth is finite. In float, centre * 1e30 * 1e30 is infinite
// above 3.4e-22, and stays infinite; in the truth's double it is 1e62 at most, and comes back.
// Where the centre is above 128 every row of it must be run_failed on a finite input, counting
// those elements, never ok; on an input with a non-finite value the rule does not apply
// (tests/fault_test.py, docs/bad-input.md).
//
// @name overflow
// @radius 0
// @metric mre
// @summary the centre value, infinite in float where it is above 128 (outputs non-finite where the truth is finite)
#define RADIUS 0
#include "kperf_tile.cl"

inline float overflow_point(const float* c) {
  const float centre = KPERF_AT(c, 0, 0);
  const float scaled = centre * 1e30f * 1e30f;  // float: inf; double: finite
  return centre > 128.0f ? scaled * 1e-30f * 1e-30f : centre;
}

KPERF_IMAGE_KERNEL(overflow_point)
