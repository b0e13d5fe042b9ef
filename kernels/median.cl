// median: 3x3 median selected in private memory with a 19 compare-exchange network
// (Paeth / Devillard opt_med9), no general sort.
#define RADIUS 1
#include "kperf_tile.cl"

#define KPERF_SORT2(a, b)    \
  {                          \
    const float lo = fmin(a, b); \
    b = fmax(a, b);          \
    a = lo;                  \
  }

inline float median_point(const float* c) {
  float p0 = KPERF_AT(c, -1, -1), p1 = KPERF_AT(c, -1, 0), p2 = KPERF_AT(c, -1, 1);
  float p3 = KPERF_AT(c, 0, -1), p4 = KPERF_AT(c, 0, 0), p5 = KPERF_AT(c, 0, 1);
  float p6 = KPERF_AT(c, 1, -1), p7 = KPERF_AT(c, 1, 0), p8 = KPERF_AT(c, 1, 1);
  KPERF_SORT2(p1, p2); KPERF_SORT2(p4, p5); KPERF_SORT2(p7, p8);
  KPERF_SORT2(p0, p1); KPERF_SORT2(p3, p4); KPERF_SORT2(p6, p7);
  KPERF_SORT2(p1, p2); KPERF_SORT2(p4, p5); KPERF_SORT2(p7, p8);
  KPERF_SORT2(p0, p3); KPERF_SORT2(p5, p8); KPERF_SORT2(p4, p7);
  KPERF_SORT2(p3, p6); KPERF_SORT2(p1, p4); KPERF_SORT2(p2, p5);
  KPERF_SORT2(p4, p7); KPERF_SORT2(p4, p2); KPERF_SORT2(p6, p4);
  KPERF_SORT2(p4, p2);
  return p4;
}

KPERF_IMAGE_KERNEL(median_point)
