// Output fill "separate": the app kernel stores its computed outputs only, and
// kperf_output_fill, a second launch timed with it, rebuilds every other output from the stored
// ones (output_grid.cl's rule). Kept beside the one-launch fill for comparison: it moves the
// computed outputs twice and the rest once more through global memory.
#define KPERF_OUT_NQY OUT_PY
#define KPERF_OUT_NQX OUT_VEC

// Stores a work-item's computed outputs (vals: OUT_PY x OUT_VEC blocks of PY x VEC), skipping
// positions past the grid.
inline void kperf_output_store(__global KPERF_OUT_T* out, int width, int height, const float* vals) {
  const int y0 = (int)get_group_id(1) * BLOCK_Y, x0 = (int)get_group_id(0) * BLOCK_X;
#pragma unroll
  for (int qy = 0; qy < OUT_PY; ++qy)
#pragma unroll
    for (int qx = 0; qx < OUT_VEC; ++qx)
      kperf_store_at(out, width, height, y0 + kperf_item_row(qy), x0 + kperf_item_col(qx),
                     &vals[(qy * OUT_VEC + qx) * PY * VEC]);
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
