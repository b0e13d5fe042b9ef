// Output schemes rows:K, cols:K and center:K (Paraprox's row / column / center, SYprox's
// nn_out / lerp_out). One output line in OUT_KY along y ((y mod OUT_KY) == OUT_KY / 2) and one in
// OUT_KX along x is computed; every other output takes the nearest computed one (ties take the
// lower index) or, with OUT_LI, the linear interpolation between the two nearest computed lines
// (bilinear for center; nn before the first and past the last computed line). A work-item
// computes OUT_PY (OUT_VEC) lines one period apart along each scheme axis. Its fill file
// (KPERF_OUTPUT_FILL_FILE) writes the rest: output_fill_fused.cl in the same launch (the default),
// output_fill_separate.cl in a second, timed launch.
#ifndef KPERF_OUTPUT_FILL_FILE
#define KPERF_OUTPUT_FILL_FILE output_fill_fused.cl
#endif

// Where position p of an axis of n outputs, computed every k at k * j + k / 2, takes its value
// from: computed positions *a and *b mixed with weight *w (a == b: a copy of one).
inline void kperf_output_source(int p, int n, int k, int* a, int* b, float* w) {
  const int m = (n - k / 2 + k - 1) / k;  // computed lines inside the grid
  int ja = p >= k / 2 ? min((p - k / 2) / k, m - 1) : -1;
  int jb = (ja >= 0 && ja * k + k / 2 == p) ? ja : ja + 1;
  if (jb >= m) jb = ja;
  if (ja < 0) ja = jb;
  *a = *b = ja * k + k / 2;
  *w = 0.0f;
  if (ja == jb) return;
  const int da = p - *a, db = jb * k + k / 2 - p;
#if OUT_LI
  *b = jb * k + k / 2;
  *w = (float)da / (float)(da + db);
#else
  if (da > db) *a = *b = jb * k + k / 2;
#endif
}

#include KPERF_STR(KPERF_OUTPUT_FILL_FILE)
