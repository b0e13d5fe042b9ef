// median: 3x3 median by the Paeth / Devillard selection (opt_med9) with its first stage shared:
// each window column of three is sorted once per output row and serves the three outputs that
// cover it (and two of its rows, sorted once, serve two output rows); an output's median is then
// med3(max of the column minima, med3 of the column medians, min of the column maxima). The same
// selection as the 19 compare-exchange network with the window transposed, so it returns the
// same element, in about 18 min/max per output instead of 38 (on GPUs median is bound by min/max
// throughput).
//
// @name median
// @radius 1
// @metric mre
// @summary 3x3 median filter
#define RADIUS 1
#include "kperf_tile.cl"

inline float median_med3(float a, float b, float c) {
  return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

// Output row p's column triples are window rows p..p+2; rows p+1 and p+2 form a pair that serves
// output rows p and p+1 (inserting a third element into a sorted pair takes 4 min/max, a sort of
// three 6). median_block calls this twice with the same pair; after unrolling the compiler
// computes the pair's min/max once.
inline void median_columns(const float* win, int pair_row, int other_row, float* lo, float* mid,
                           float* hi) {
#pragma unroll
  for (int c = 0; c < KPERF_WIN_W; ++c) {
    const float a = win[pair_row * KPERF_WIN_W + c], b = win[(pair_row + 1) * KPERF_WIN_W + c];
    const float s0 = fmin(a, b), s1 = fmax(a, b), x = win[other_row * KPERF_WIN_W + c];
    lo[c] = fmin(s0, x);
    hi[c] = fmax(s1, x);
    mid[c] = fmax(s0, fmin(s1, x));
  }
}

// Adjacent outputs v and v + 1 (v even) share window columns v + 1 and v + 2: the max of their
// minima, min of their maxima and the sorted pair of their medians are taken once for both
// (med3(a, b, c) with b <= c sorted is max(b, min(c, a))), 10 min/max per output instead of 12.
inline void median_row(const float* lo, const float* mid, const float* hi, float* result) {
#pragma unroll
  for (int v = 0; v + 1 < VEC; v += 2) {
    const float lo_pair = fmax(lo[v + 1], lo[v + 2]), hi_pair = fmin(hi[v + 1], hi[v + 2]);
    const float mid_lo = fmin(mid[v + 1], mid[v + 2]), mid_hi = fmax(mid[v + 1], mid[v + 2]);
    result[v] = median_med3(fmax(lo[v], lo_pair), fmax(mid_lo, fmin(mid_hi, mid[v])),
                            fmin(hi[v], hi_pair));
    result[v + 1] = median_med3(fmax(lo_pair, lo[v + 3]), fmax(mid_lo, fmin(mid_hi, mid[v + 3])),
                                fmin(hi_pair, hi[v + 3]));
  }
#if VEC % 2
  {
    const int v = VEC - 1;
    const float max_lo = fmax(fmax(lo[v], lo[v + 1]), lo[v + 2]);
    const float min_hi = fmin(fmin(hi[v], hi[v + 1]), hi[v + 2]);
    result[v] = median_med3(max_lo, median_med3(mid[v], mid[v + 1], mid[v + 2]), min_hi);
  }
#endif
}

inline void median_block(const float* win, float* result) {
#pragma unroll
  for (int p = 0; p < PY; p += 2) {
    float lo[KPERF_WIN_W], mid[KPERF_WIN_W], hi[KPERF_WIN_W];
    median_columns(win, p + 1, p, lo, mid, hi);
    median_row(lo, mid, hi, &result[p * VEC]);
    if (p + 1 < PY) {
      median_columns(win, p + 1, p + 3, lo, mid, hi);
      median_row(lo, mid, hi, &result[(p + 1) * VEC]);
    }
  }
}

KPERF_IMAGE_KERNEL_BLOCK(median_block)
