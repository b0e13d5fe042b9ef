// Output schemes rows:K, cols:K and center:K (Paraprox's row / column / center, SYprox's
// nn_out / lerp_out): one output line in OUT_KY (rows) and/or OUT_KX (columns) is computed, at
// offset K / 2 of each period (the grid's last line in a final partial period). The work-group
// shares its computed outputs through local memory and rebuilds every other output of its block
// from them: the nearest computed output (ties take the lower index) or, with OUT_LI, linear
// (bilinear for center) interpolation between the nearest computed lines on either side; nn at
// the block's edges. Like the input reconstruction, it uses the work-group's own block only.

#define KPERF_CY (WG_Y * PY)  // computed outputs of a block along y
#define KPERF_CX (WG_X * VEC)

// Where output `p` of a block line of `n_pos` outputs (with `n` computed lines, one per period of
// k) takes its value from: computed lines *a and *b mixed with weight *w (a == b: a copy).
inline void kperf_output_source(int p, int n_pos, int k, int* a, int* b, float* w) {
  const int n = (n_pos + k - 1) / k;
#define KPERF_COMPUTED_POS(j) min((j) * k + k / 2, n_pos - 1)
  int ja = p >= k / 2 ? min((p - k / 2) / k, n - 1) : -1;
  if (ja + 1 < n && KPERF_COMPUTED_POS(ja + 1) <= p) ++ja;  // a final line clamped to the edge
  int jb = (ja >= 0 && KPERF_COMPUTED_POS(ja) == p) ? ja : ja + 1;
  if (jb >= n) jb = ja;
  if (ja < 0) ja = jb;
  *w = 0.0f;
  *a = *b = ja;
  if (ja == jb) return;
  const int da = p - KPERF_COMPUTED_POS(ja), db = KPERF_COMPUTED_POS(jb) - p;
#if OUT_LI
  *b = jb;
  *w = (float)da / (float)(da + db);
#else
  if (da > db) *a = *b = jb;
#endif
#undef KPERF_COMPUTED_POS
}

inline void kperf_store_grid(__global float* out, int width, int height, const float* values,
                             __local float* computed) {
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) computed[(ly * PY + p) * KPERF_CX + lx * VEC + v] = values[p * VEC + v];
  barrier(CLK_LOCAL_MEM_FENCE);
  const int by0 = (int)get_group_id(1) * BLOCK_Y, bx0 = (int)get_group_id(0) * BLOCK_X;
  const int rows = min(BLOCK_Y, height - by0), cols = min(BLOCK_X, width - bx0);
  if (rows <= 0 || cols <= 0) return;
  for (int i = kperf_local_linear_id(); i < rows * cols; i += WG_SIZE) {
    const int py = i / cols, px = i - py * cols;
    int ya, yb, xa, xb;
    float wy, wx;
    kperf_output_source(py, rows, OUT_KY, &ya, &yb, &wy);
    kperf_output_source(px, cols, OUT_KX, &xa, &xb, &wx);
    float top = computed[ya * KPERF_CX + xa];
#if OUT_LI
    if (xa != xb) top = mad(wx, computed[ya * KPERF_CX + xb] - top, top);
    if (ya != yb) {
      float bottom = computed[yb * KPERF_CX + xa];
      if (xa != xb) bottom = mad(wx, computed[yb * KPERF_CX + xb] - bottom, bottom);
      top = mad(wy, bottom - top, top);
    }
#endif
    out[(by0 + py) * width + bx0 + px] = top;
  }
}

#define KPERF_STORE(out, width, height, values)             \
  __local float kperf_computed[KPERF_CY * KPERF_CX];        \
  kperf_store_grid(out, width, height, values, kperf_computed)
