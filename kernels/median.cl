// median: 3x3 median by the Paeth / Devillard selection (opt_med9) with its first stage shared:
// each window column of three is sorted once per output row and serves the three outputs that
// cover it; an output's median is then med3(max of the column minima, med3 of the column
// medians, min of the column maxima). The same selection as the 19 compare-exchange network
// with the window transposed, so it returns the same element, in about 21 min/max per output
// instead of 38 (median is bound by min/max throughput on GPUs).
#define RADIUS 1
#include "kperf_tile.cl"

inline float median_med3(float a, float b, float c) {
  return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

inline void median_block(const float* win, float* result) {
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    float lo[KPERF_WIN_W], mid[KPERF_WIN_W], hi[KPERF_WIN_W];
#pragma unroll
    for (int c = 0; c < KPERF_WIN_W; ++c) {
      const float a = win[p * KPERF_WIN_W + c], b = win[(p + 1) * KPERF_WIN_W + c];
      const float d = win[(p + 2) * KPERF_WIN_W + c];
      const float ab_lo = fmin(a, b), ab_hi = fmax(a, b);
      lo[c] = fmin(ab_lo, d);
      hi[c] = fmax(ab_hi, d);
      mid[c] = fmax(ab_lo, fmin(ab_hi, d));
    }
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float max_lo = fmax(fmax(lo[v], lo[v + 1]), lo[v + 2]);
      const float min_hi = fmin(fmin(hi[v], hi[v + 1]), hi[v + 2]);
      const float med_mid = median_med3(mid[v], mid[v + 1], mid[v + 2]);
      result[p * VEC + v] = median_med3(max_lo, med_mid, min_hi);
    }
  }
}

KPERF_IMAGE_KERNEL_BLOCK(median_block)
