// order_dependent: a 3x3 box mean whose last output row, under the stencil scheme, carries a
// trace of the order in which the work-items ran, a known-bad user app for `kperf check`'s
// reproducibility check: two launches of one configuration give different bits.
//
// Every work-item of a stencil launch spins a while (so that the device's threads run at once:
// PoCL's two on two cores) and then takes a ticket, the low byte of the output's last element
// counted up by atomic compare-and-swap; the last row's outputs add 1e-5 x (ticket mod 61).
// How many tickets the other threads took first changes from launch to launch. The trace is far
// below the model check's tolerance, the last element (whose own store lands somewhere among the
// counts) moves by at most 255 ulps, the poison check's interior group holds neither, and no
// other check runs stencil, so only the reproducibility check fails (tests/app_mutants_test.py;
// docs/testing.md, "Known-bad kernels"). The input is left alone: the runner keeps one input
// buffer for every configuration of a run, so a count there would reach the other schemes.
//
// @name order_dependent
// @radius 1
// @metric mre
// @range 0 255
// @summary 3x3 box mean, last row marked by work-item order under stencil (fails reproducible)
#define RADIUS 1
#define KPERF_CALL(block_fn, win, result, y0, x0) \
  block_fn(win, result, y0, width, height, out)
#include "kperf_tile.cl"

#if defined(KPERF_HALO_ELEMS) && !KPERF_FP64_TRUTH
// The mutation: a ticket whose value depends on the order the work-items ran in.
inline int order_dependent_ticket(__global KPERF_OUT_T* out, int width, int height) {
  float spin = 0.0f;
  for (int i = 0; i < 10000; ++i) spin = spin * 0.5f + 1.0f;  // converges to 2
  volatile __global uint* counter = (volatile __global uint*)out + (width * height - 1);
  uint old = *counter, seen;
  while ((seen = atomic_cmpxchg(counter, old, (old & ~0xffu) | ((old + 1u) & 0xffu))) != old)
    old = seen;
  return (int)(old & 0xffu) + (spin > 3.0f ? 1 : 0);
}
#else
inline int order_dependent_ticket(__global KPERF_OUT_T* out, int width, int height) { return 0; }
#endif

inline void order_dependent_block(const float* win, float* result, int y0, int width, int height,
                                  __global KPERF_OUT_T* out) {
  const int ticket = order_dependent_ticket(out, width, height);
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
      const float trace = y0 + p == height - 1 ? 1e-5f * (float)(ticket % 61) : 0.0f;
      result[p * VEC + v] = sum * (1.0f / 9.0f) + trace;
    }
}

KPERF_IMAGE_KERNEL_BLOCK(order_dependent_block)
