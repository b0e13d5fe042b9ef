// Output schemes rows:K, cols:K and center:K (Paraprox's row / column / center, SYprox's
// nn_out / lerp_out). The app kernel computes and stores only the outputs on computed lines,
// (y mod OUT_KY) == OUT_KY / 2 and (x mod OUT_KX) == OUT_KX / 2; then kperf_output_fill, a second
// launch timed with it, rebuilds every other output from the stored computed ones: the nearest
// computed output (ties take the lower index) or, with OUT_LI, linear interpolation between the
// two nearest computed lines (bilinear for center; nn past the first and last computed line).
// A second pass because the nearest computed output may belong to another work-group.

// Stores a work-item's computed outputs (PY x VEC of them; PY is 1 under rows/center, VEC 1
// under cols/center), skipping positions past the grid.
inline void kperf_store_computed(__global float* out, int width, int height, const float* values) {
  const int y0 = kperf_out_y(height), x0 = kperf_out_x(width);
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      if (y0 + p < height && x0 + v < width) out[(y0 + p) * width + x0 + v] = values[p * VEC + v];
}

#define KPERF_STORE(out, width, height, values) kperf_store_computed(out, width, height, values)

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

// One work-item per output; outputs on computed lines (both axes) are left as stored.
__kernel void kperf_output_fill(__global float* out, int width, int height) {
  const int x = (int)get_global_id(0), y = (int)get_global_id(1);
  if (x >= width || y >= height) return;
  if (y % OUT_KY == OUT_KY / 2 && x % OUT_KX == OUT_KX / 2) return;
  int ya, yb, xa, xb;
  float wy, wx;
  kperf_output_source(y, height, OUT_KY, &ya, &yb, &wy);
  kperf_output_source(x, width, OUT_KX, &xa, &xb, &wx);
  float top = out[ya * width + xa];
#if OUT_LI
  if (xa != xb) top = mad(wx, out[ya * width + xb] - top, top);
  if (ya != yb) {
    float bottom = out[yb * width + xa];
    if (xa != xb) bottom = mad(wx, out[yb * width + xb] - bottom, bottom);
    top = mad(wy, bottom - top, top);
  }
#endif
  out[y * width + x] = top;
}
