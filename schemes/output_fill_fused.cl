// Output fill "fused" (the default): one launch, as Paraprox runs its output schemes. The
// work-item that computes an output also writes every output whose value comes from it: its
// nearest-neighbour copies (ties take the lower index; before the first and past the last
// computed line, copies of those), or under li the lines it interpolates up to the next computed
// line. Along y it computes that next line too (one more computed output per work-item): the
// next work-item's first, or past the block the next group's, read as that group reads it, or
// from a larger tile where it holds the same values (KPERF_OUTPUT_WINDOW). Along x the next
// work-item shares its first computed column through local memory (KPERF_OUT_SHARE_NEXT_X).
// Outputs equal the separate fill's: bit for bit under nn, to float rounding under li.
#define KPERF_OUT_NQY (OUT_PY + KPERF_OUT_NEXT_Y)
#define KPERF_OUT_NQX (OUT_VEC + KPERF_OUT_NEXT_X)

// Whether the work-item whose computed line (on an axis of n outputs, period k) is c writes line
// c + d, for -(k / 2) <= d < k, and how: a copy of line c, or (*interp) the linear
// interpolation at weight *w from line c towards the next computed line, c + k.
inline int kperf_fused_line(int c, int d, int n, int k, int* interp, float* w) {
  *interp = 0;
  *w = 0.0f;
  if (c >= n || c + d >= n) return 0;
  if (d < 0) {
    if (c < k) return 1;  // before the first computed line: its copies
#if OUT_LI
    return 0;  // the line before interpolates up to this one
#else
    return d >= -((k - 1) / 2);  // a tie belongs to the line before
#endif
  }
  if (d == 0 || c + k >= n) return 1;  // the line itself, or past the last one: its copies
#if OUT_LI
  *interp = 1;
  *w = (float)d / (float)k;
  return 1;
#else
  return d <= k / 2;
#endif
}

// Writes what this work-item owns from its computed outputs vals (KPERF_OUT_NQY x KPERF_OUT_NQX
// blocks of PY x VEC), rounded first to the stored precision, as the separate fill reads them.
inline void kperf_output_store(__global KPERF_OUT_T* out, int width, int height, float* vals) {
#pragma unroll
  for (int i = 0; i < KPERF_OUT_NQY * KPERF_OUT_NQX * PY * VEC; ++i) vals[i] = kperf_round_out(vals[i]);
#if OUT_KX == 1
  // rows:K: whole output rows of VEC, float4 stores where the rows allow them.
  const int gy0 = (int)get_group_id(1) * BLOCK_Y, x0 = kperf_out_x0();
  int iy;
  float wy;
#pragma unroll
  for (int q = 0; q < OUT_PY; ++q) {
    const int c = gy0 + kperf_item_row(q);
#pragma unroll
    for (int d = -(OUT_KY / 2); d < OUT_KY; ++d) {
      if (!kperf_fused_line(c, d, height, OUT_KY, &iy, &wy)) continue;
      float row[VEC];
#pragma unroll
      for (int v = 0; v < VEC; ++v) row[v] = vals[q * VEC + v];
#if OUT_LI
      if (iy)
#pragma unroll
        for (int v = 0; v < VEC; ++v) row[v] = mad(wy, vals[(q + 1) * VEC + v] - row[v], row[v]);
#endif
      kperf_store_at(out, width, height, c + d, x0, row);
    }
  }
#elif OUT_KY == 1
  // cols:K: PY rows, each of OUT_VEC computed columns and their copies.
  const int y0 = kperf_out_y0(), gx0 = (int)get_group_id(0) * BLOCK_X;
  int ix;
  float wx;
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    const int y = y0 + p;
    if (y >= height) return;
#pragma unroll
    for (int q = 0; q < OUT_VEC; ++q) {
      const int c = gx0 + kperf_item_col(q);
#pragma unroll
      for (int d = -(OUT_KX / 2); d < OUT_KX; ++d) {
        if (!kperf_fused_line(c, d, width, OUT_KX, &ix, &wx)) continue;
        float value = vals[q * PY + p];
#if OUT_LI
        if (ix) value = mad(wx, vals[(q + 1) * PY + p] - value, value);
#endif
        kperf_write_out(out, y * width + c + d, value);
      }
    }
  }
#else
  // center:K: along x, then along y (bilinear in the separate fill's order).
  const int gy0 = (int)get_group_id(1) * BLOCK_Y, gx0 = (int)get_group_id(0) * BLOCK_X;
  int iy, ix;
  float wy, wx;
#define KPERF_OUT_VAL(qy, qx) vals[(qy) * KPERF_OUT_NQX + (qx)]
#pragma unroll
  for (int qy = 0; qy < OUT_PY; ++qy) {
    const int cy = gy0 + kperf_item_row(qy);
#pragma unroll
    for (int dy = -(OUT_KY / 2); dy < OUT_KY; ++dy) {
      if (!kperf_fused_line(cy, dy, height, OUT_KY, &iy, &wy)) continue;
#pragma unroll
      for (int qx = 0; qx < OUT_VEC; ++qx) {
        const int cx = gx0 + kperf_item_col(qx);
#pragma unroll
        for (int dx = -(OUT_KX / 2); dx < OUT_KX; ++dx) {
          if (!kperf_fused_line(cx, dx, width, OUT_KX, &ix, &wx)) continue;
          float top = KPERF_OUT_VAL(qy, qx);
#if OUT_LI
          if (ix) top = mad(wx, KPERF_OUT_VAL(qy, qx + 1) - top, top);
          if (iy) {
            float bottom = KPERF_OUT_VAL(qy + 1, qx);
            if (ix) bottom = mad(wx, KPERF_OUT_VAL(qy + 1, qx + 1) - bottom, bottom);
            top = mad(wy, bottom - top, top);
          }
#endif
          kperf_write_out(out, (cy + dy) * width + cx + dx, top);
        }
      }
    }
  }
#undef KPERF_OUT_VAL
#endif
}
