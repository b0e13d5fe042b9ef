// metrics: the error metrics (semantics §10) on the device, so an output never has to
// leave it. Each work-group reduces a fixed grid-stride share of the elements to partial sums
// that the host adds in group order: the result depends on the launch shape only, which is fixed.
// The grid-stride loops count in size_t: a grid of up to INT_MAX elements (io.hpp) plus one
// stride would overflow an int.
// The output is read as the precision file of its storage reads it (-DKPERF_PRECISION_FILE,
// with -I the scheme directory): any storage type kperf has, with no case of its own here. The
// truth is double.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef GROUP
#define GROUP 256
#endif
#ifndef KPERF_PRECISION_FILE
#define KPERF_PRECISION_FILE precision_f32.cl
#endif
#define KPERF_STR_(x) #x
#define KPERF_STR(x) KPERF_STR_(x)
#include KPERF_STR(KPERF_PRECISION_FILE)
#define OUT_T KPERF_OUT_T
#define LOAD_OUT(p, i) ((double)kperf_read_out(p, i))

// Tree reduction of one value per work-item in `scratch` (GROUP entries); OP combines two.
#define REDUCE(scratch, value, OP)                                     \
  do {                                                                 \
    const int lid_ = (int)get_local_id(0);                             \
    scratch[lid_] = (value);                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                      \
    for (int s_ = GROUP / 2; s_ > 0; s_ >>= 1) {                       \
      if (lid_ < s_) scratch[lid_] = OP(scratch[lid_], scratch[lid_ + s_]); \
      barrier(CLK_LOCAL_MEM_FENCE);                                    \
    }                                                                  \
  } while (0)
#define ADD(a, b) ((a) + (b))

// Pass 1: the truth's range over the elements where both truth and output are finite.
// partial[3 * group + {0, 1, 2}] = max T, min T, max |T|.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void error_range(
    __global const double* truth, __global const OUT_T* out, int n, __global double* partial) {
  __local double scratch[GROUP];
  double hi = -INFINITY, lo = INFINITY, big = 0.0;
  for (size_t i = get_global_id(0); i < (size_t)n; i += get_global_size(0)) {
    const double t = truth[i], a = LOAD_OUT(out, i);
    if (!isfinite(t) || !isfinite(a)) continue;
    hi = fmax(hi, t);
    lo = fmin(lo, t);
    big = fmax(big, fabs(t));
  }
  const int g = (int)get_group_id(0);
  REDUCE(scratch, hi, fmax);
  if (get_local_id(0) == 0) partial[3 * g] = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  REDUCE(scratch, lo, fmin);
  if (get_local_id(0) == 0) partial[3 * g + 1] = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  REDUCE(scratch, big, fmax);
  if (get_local_id(0) == 0) partial[3 * g + 2] = scratch[0];
}

// Pass 2: sums and counts. sums[4 * group + {0..3}] = sum |T - A| / |T| (|T| > threshold),
// sum |T - A|, sum (T - A)^2, max |T - A|; counts[5 * group + {0..4}] = n, n_rel, excluded,
// nonfinite, wrong.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void error_sums(
    __global const double* truth, __global const OUT_T* out, int n, double threshold,
    double wrong_threshold, __global double* sums, __global long* counts) {
  __local double scratch[GROUP];
  __local long count_scratch[GROUP];
  double rel = 0.0, abs_sum = 0.0, sq = 0.0, max_abs = 0.0;
  long used = 0, used_rel = 0, excluded = 0, nonfinite = 0, wrong = 0;
  for (size_t i = get_global_id(0); i < (size_t)n; i += get_global_size(0)) {
    const double t = truth[i], a = LOAD_OUT(out, i);
    if (isfinite(t) && !(fabs(t - a) <= wrong_threshold)) ++wrong;
    if (!isfinite(t) || !isfinite(a)) {
      ++nonfinite;
      continue;
    }
    const double diff = fabs(t - a);
    ++used;
    abs_sum += diff;
    sq += diff * diff;
    max_abs = fmax(max_abs, diff);
    if (fabs(t) > threshold) {
      rel += diff / fabs(t);
      ++used_rel;
    } else {
      ++excluded;
    }
  }
  const int g = (int)get_group_id(0);
  const int lid = (int)get_local_id(0);
  REDUCE(scratch, rel, ADD);
  if (lid == 0) sums[4 * g] = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  REDUCE(scratch, abs_sum, ADD);
  if (lid == 0) sums[4 * g + 1] = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  REDUCE(scratch, sq, ADD);
  if (lid == 0) sums[4 * g + 2] = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  REDUCE(scratch, max_abs, fmax);
  if (lid == 0) sums[4 * g + 3] = scratch[0];
  const long values[5] = {used, used_rel, excluded, nonfinite, wrong};
  for (int k = 0; k < 5; ++k) {
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCE(count_scratch, values[k], ADD);
    if (lid == 0) counts[5 * g + k] = count_scratch[0];
  }
}

// Pass 3: mean SSIM's sum over the valid window positions (ow x oh), each 11x11 Gaussian window
// evaluated directly; non-finite elements count as 0. partial[group] = the group's sum.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void ssim_sum(
    __global const double* truth, __global const OUT_T* out, int width, int height, double c1,
    double c2, __constant double* g, __global double* partial) {
  __local double scratch[GROUP];
  const int ow = width - 10, oh = height - 10;
  const int positions = ow * oh;
  double acc = 0.0;
  for (size_t p = get_global_id(0); p < (size_t)positions; p += get_global_size(0)) {
    const int y0 = (int)(p / ow), x0 = (int)p - y0 * ow;
    double m[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int ky = 0; ky < 11; ++ky) {
      double h[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
      const int row = (y0 + ky) * width + x0;
      for (int kx = 0; kx < 11; ++kx) {
        double x = truth[row + kx], y = LOAD_OUT(out, row + kx);
        x = isfinite(x) ? x : 0.0;
        y = isfinite(y) ? y : 0.0;
        h[0] += g[kx] * x;
        h[1] += g[kx] * y;
        h[2] += g[kx] * x * x;
        h[3] += g[kx] * y * y;
        h[4] += g[kx] * x * y;
      }
      for (int c = 0; c < 5; ++c) m[c] += g[ky] * h[c];
    }
    const double vx = m[2] - m[0] * m[0], vy = m[3] - m[1] * m[1], cxy = m[4] - m[0] * m[1];
    acc += ((2 * m[0] * m[1] + c1) * (2 * cxy + c2)) /
           ((m[0] * m[0] + m[1] * m[1] + c1) * (vx + vy + c2));
  }
  REDUCE(scratch, acc, ADD);
  if (get_local_id(0) == 0) partial[get_group_id(0)] = scratch[0];
}
