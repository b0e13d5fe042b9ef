// canary: the device canary's reduction (host/measure/device_canary.cpp). Per sampled window of
// every rung of a ladder, the error sums estimate_from_tiles needs (host/model/input_canary.hpp),
// between the rung's stored outputs and the accurate kernel's on the same sampled blocks, so that
// only those sums leave the device. One work-group per window and one work-item per output of it
// (a window holds at most WINDOW_X x WINDOW_Y outputs). Sums in float: each is a tree of at most
// WINDOW terms, within 7 roundings of float (the host adds the windows in double); the truth is
// the float accurate kernel's anyway.
// Window w is described by two int4, windows[2 w] = (y0, y1, x0, x1), the outputs it compares in
// the grid, and windows[2 w + 1] = (first, count, offset low, offset high): its rung's windows
// [first, first + count) (the MRE's near-zero threshold is 1e-6 of the largest |T| over them, as
// the host canary's) and where the rung's outputs start in the buffer `out` (elements).
// The rung's outputs are read as the precision file of their storage reads them
// (-DKPERF_PRECISION_FILE, with -I the scheme directory), as in metrics.cl.
#ifndef WINDOW_X
#define WINDOW_X 16
#endif
#ifndef WINDOW_Y
#define WINDOW_Y 8
#endif
#define WINDOW (WINDOW_X * WINDOW_Y)
#ifndef KPERF_PRECISION_FILE
#define KPERF_PRECISION_FILE precision_f32.cl
#endif
#define KPERF_STR_(x) #x
#define KPERF_STR(x) KPERF_STR_(x)
#include KPERF_STR(KPERF_PRECISION_FILE)

// Tree reduction of `scratch` (WINDOW entries) into scratch[0]; OP combines two.
#define REDUCE(scratch, lid, OP)                                                   \
  do {                                                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    for (int s_ = WINDOW / 2; s_ > 0; s_ >>= 1) {                                  \
      if ((lid) < s_) scratch[lid] = OP(scratch[lid], scratch[(lid) + s_]);        \
      barrier(CLK_LOCAL_MEM_FENCE);                                                \
    }                                                                              \
  } while (0)
// rel and abs add, the truth's range takes the least and the most.
#define SUMS_OP(a, b) ((float4)((a).x + (b).x, (a).y + (b).y, fmin((a).z, (b).z), fmax((a).w, (b).w)))
#define ADD(a, b) ((a) + (b))

// The grid element work-item `lid` compares in window `rect`, or false past its edges.
inline bool canary_element(int4 rect, int lid, int* y, int* x) {
  *y = rect.x + lid / WINDOW_X;
  *x = rect.z + lid % WINDOW_X;
  return *y < rect.y && *x < rect.w;
}

// Pass 1, every window: wmax[w] = the largest finite |T| in window w (0 if none).
__kernel __attribute__((reqd_work_group_size(WINDOW, 1, 1))) void canary_window_max(
    __global const float* truth, __global const int4* windows, int width, __global float* wmax) {
  __local float scratch[WINDOW];
  const int w = (int)get_group_id(0), lid = (int)get_local_id(0);
  int y, x;
  float big = 0.0f;
  if (canary_element(windows[2 * w], lid, &y, &x)) {
    const float t = truth[(size_t)y * width + x];
    if (isfinite(t)) big = fabs(t);
  }
  scratch[lid] = big;
  REDUCE(scratch, lid, fmax);
  if (lid == 0) wmax[w] = scratch[0];
}

// Pass 2, windows [first, first + groups) of rungs stored alike in `out`: per window w,
// sums[2 w] = (rel, abs, min T, max T) and sums[2 w + 1] = (n, n_rel, non-finite elements,
// non-finite truths) (counts as floats: at most WINDOW), as window_sums() of input_canary.cpp
// counts them.
__kernel __attribute__((reqd_work_group_size(WINDOW, 1, 1))) void canary_window_sums(
    __global const float* truth, __global const KPERF_OUT_T* out, __global const int4* windows,
    __global const float* wmax, int width, int first, __global float4* sums) {
  __local float4 f[WINDOW];
  __local float4 c[WINDOW];
  const int w = first + (int)get_group_id(0), lid = (int)get_local_id(0);
  const int4 rect = windows[2 * w], rung = windows[2 * w + 1];
  // The rung's near-zero threshold: 1e-6 of the largest |T| of its windows.
  float big = 0.0f;
  for (int i = lid; i < rung.y; i += WINDOW) big = fmax(big, wmax[rung.x + i]);
  f[lid] = (float4)(big);
  REDUCE(f, lid, fmax);
  const float threshold = 1e-6f * f[0].x;
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong offset = (ulong)(uint)rung.z | ((ulong)(uint)rung.w << 32);
  float4 here = (float4)(0.0f, 0.0f, INFINITY, -INFINITY);
  float4 counts = (float4)(0.0f);
  int y, x;
  if (canary_element(rect, lid, &y, &x)) {
    const size_t i = (size_t)y * width + x;
    const float t = truth[i], a = kperf_read_out(out, offset + i);
    if (!isfinite(t)) counts.w = 1.0f;
    if (!isfinite(t) || !isfinite(a)) {
      counts.z = 1.0f;
    } else {
      const float diff = fabs(t - a);
      counts.x = 1.0f;
      here = (float4)(0.0f, diff, t, t);
      if (fabs(t) > threshold) {
        here.x = diff / fabs(t);
        counts.y = 1.0f;
      }
    }
  }
  f[lid] = here;
  c[lid] = counts;
  REDUCE(f, lid, SUMS_OP);
  REDUCE(c, lid, ADD);
  if (lid == 0) {
    sums[2 * w] = f[0];
    sums[2 * w + 1] = c[0];
  }
}
