// Output schemes rows:K, cols:K and center:K (Paraprox's row / column / center, SYprox's
// nn_out / lerp_out). The app kernel computes and stores only the outputs on computed lines,
// (y mod OUT_KY) == OUT_KY / 2 and (x mod OUT_KX) == OUT_KX / 2; then kperf_output_fill, a second
// launch timed with it, rebuilds every other output from the stored computed ones: the nearest
// computed output (ties take the lower index) or, with OUT_LI, linear interpolation between the
// two nearest computed lines (bilinear for center; nn past the first and last computed line).
// A second pass because the nearest computed output may belong to another work-group.

// Stores a work-item's computed outputs (PY x VEC of them; PY is 1 under rows/center, VEC 1
// under cols/center), skipping positions past the grid.
inline void kperf_store_computed(__global KPERF_OUT_T* out, int width, int height, const float* values) {
  const int y0 = kperf_out_y(height), x0 = kperf_out_x(width);
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      if (y0 + p < height && x0 + v < width)
        kperf_write_out(out, (y0 + p) * width + x0 + v, values[p * VEC + v]);
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

// Missing line number i (the lines that are not k * j + k / 2, in order) of an axis.
inline int kperf_missing_line(int i, int k) {
  const int period = i / (k - 1), o = i - period * (k - 1);
  return period * k + o + (o >= k / 2 ? 1 : 0);
}

// The value of output (y, x) from the stored computed outputs.
inline float kperf_fill_value(__global const KPERF_OUT_T* out, int width, int height, int y, int x) {
  int ya, yb, xa, xb;
  float wy, wx;
  kperf_output_source(y, height, OUT_KY, &ya, &yb, &wy);
  kperf_output_source(x, width, OUT_KX, &xa, &xb, &wx);
  float top = kperf_read_out(out, ya * width + xa);
#if OUT_LI
  if (xa != xb) top = mad(wx, kperf_read_out(out, ya * width + xb) - top, top);
  if (ya != yb) {
    float bottom = kperf_read_out(out, yb * width + xa);
    if (xa != xb) bottom = mad(wx, kperf_read_out(out, yb * width + xb) - bottom, bottom);
    top = mad(wy, bottom - top, top);
  }
#endif
  return top;
}

// Rebuilds the outputs that were not computed; the host sizes the launch per scheme
// (Runner::time_config). rows:K: dimension 1 walks the missing rows, each work-item
// 4 consecutive outputs (float4 where rows are 16-byte aligned). cols:K: dimension 0 walks the
// missing columns. center:K: one work-item per output, computed ones left as stored.
__kernel void kperf_output_fill(__global KPERF_OUT_T* out, int width, int height) {
#if OUT_KX == 1
  const int y = kperf_missing_line((int)get_global_id(1), OUT_KY);
  const int x0 = (int)get_global_id(0) * 4;
  if (y >= height || x0 >= width) return;
  if ((width & 3) == 0) {
    int ya, yb;
    float wy;
    kperf_output_source(y, height, OUT_KY, &ya, &yb, &wy);
    float4 a = kperf_read_out4(out, (ya * width + x0) / 4);
#if OUT_LI
    if (ya != yb) a = mad((float4)(wy), kperf_read_out4(out, (yb * width + x0) / 4) - a, a);
#endif
    kperf_write_out4(out, (y * width + x0) / 4, a);
    return;
  }
  for (int x = x0; x < min(x0 + 4, width); ++x)
    kperf_write_out(out, y * width + x, kperf_fill_value(out, width, height, y, x));
#elif OUT_KY == 1
  const int x = kperf_missing_line((int)get_global_id(0), OUT_KX);
  const int y = (int)get_global_id(1);
  if (x >= width || y >= height) return;
  kperf_write_out(out, y * width + x, kperf_fill_value(out, width, height, y, x));
#else
  const int x = (int)get_global_id(0), y = (int)get_global_id(1);
  if (x >= width || y >= height) return;
  if (y % OUT_KY == OUT_KY / 2 && x % OUT_KX == OUT_KX / 2) return;
  kperf_write_out(out, y * width + x, kperf_fill_value(out, width, height, y, x));
#endif
}
