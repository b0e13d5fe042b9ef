// Output fill "fused" (the default): one launch, as Paraprox runs its output schemes. Each
// work-item writes the outputs whose values come from its computed ones. Along y it writes the
// nearest-neighbour copies of its computed rows (ties take the lower index; before the first and
// past the last computed row, copies of those), or under li the rows it interpolates up to the
// next computed row, which it computes too (one more computed output per work-item: the next
// work-item's first, or past the block the next group's, read as that group reads it, or from a
// larger tile where it holds the same values). Along x it writes the aligned run of columns of
// its region, as vector stores, from its computed columns and the neighbours' nearest ones
// (kperf_tile.cl: KPERF_OUT_PREV_X, KPERF_OUT_NEXT_X). Outputs equal the separate fill's: bit
// for bit under nn, to float rounding under li.
#define KPERF_OUT_NQY (OUT_PY + KPERF_OUT_READS_NEXT_Y)
#define KPERF_OUT_NQX (OUT_VEC + KPERF_OUT_READS_PREV_X + KPERF_OUT_READS_NEXT_X)
#if (KPERF_OVERLAP_Y || KPERF_OVERLAP_X) && !defined(KPERF_FILL_SHARED)
#error "KPERF_OVERLAP_Y: the shared fill's (its work-items read each other's rows)"
#endif
// Whether this work-item stores from its computed row q along y: not from the last computed row
// of an overlapping block (KPERF_OVERLAP_Y), which is the next block's first and the next group's.
#define KPERF_OWNS_ROW(q) \
  (!KPERF_OVERLAP_Y || (int)get_local_id(1) < WG_Y - 1 || (q) < OUT_PY - 1)
// Whether this work-item stores at all: not the side work-items of overlapping blocks along x.
#define KPERF_OWNS_ITEM_X                                       \
  (!KPERF_OVERLAP_X || ((int)get_local_id(0) >= KPERF_OUT_READS_PREV_X && \
                        (int)get_local_id(0) < WG_X - KPERF_OUT_READS_NEXT_X))

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

#if OUT_KX > 1
// The value of a line at compile-time index q of a work-item's computed columns (q = -1: its
// left neighbour's last, q = OUT_VEC: its right neighbour's first).
#define KPERF_X_LINE(q) line[((q) + KPERF_OUT_READS_PREV_X) * stride]

// Row of the ITEM_COLS outputs from column x0 (a multiple of OUT_KX) from one output row's
// computed columns (line, stride apart): output x0 + i lies d = i % OUT_KX - OUT_KX / 2 from the
// work-item's computed column j = i / OUT_KX, global computed column J. Before the grid's first
// and past its last computed column, copies of those (the columns past the region are written
// by kperf_store_x_row).
inline void kperf_fused_x_row(int x0, int width, const float* line, int stride, float* row) {
  const int j0 = x0 / OUT_KX, m = (width - OUT_KX / 2 + OUT_KX - 1) / OUT_KX;
#pragma unroll
  for (int i = 0; i < ITEM_COLS; ++i) {
    const int j = i / OUT_KX, d = i % OUT_KX - OUT_KX / 2, J = j0 + j;
    const float here = KPERF_X_LINE(j);
    row[i] = here;
    if (d < 0) {
#if KPERF_OUT_READS_PREV_X
      const float before = KPERF_X_LINE(j - 1);
      if (J >= m) {
        row[i] = before;  // past the last computed column
      } else if (J > 0) {
#if OUT_LI
        row[i] = mad((float)(OUT_KX + d) / (float)OUT_KX, here - before, before);
#else
        if (d == -(OUT_KX / 2)) row[i] = before;  // a tie (even period) takes the lower line
#endif
      }
#else
      // nn with an odd period: the left neighbour's column is only the nearest past the grid's
      // last computed one, and for j == 0 then the neighbour writes this output instead.
      if (j > 0 && J >= m) row[i] = KPERF_X_LINE(j > 0 ? j - 1 : 0);
#endif
    }
#if OUT_LI && KPERF_OUT_READS_NEXT_X
    else if (d > 0 && J + 1 < m) {
      row[i] = mad((float)d / (float)OUT_KX, KPERF_X_LINE(j + 1) - here, here);
    }
#endif
  }
}
#undef KPERF_X_LINE

// Stores the ITEM_COLS outputs from (y, x0) (vector stores where the row allows them) and, where
// no computed column follows inside the grid, the copies of the last one up to the grid's edge.
inline void kperf_store_x_row(__global KPERF_OUT_T* out, int width, int y, int x0,
                              const float* row) {
#if ITEM_COLS % 4 == 0
  if ((width & 3) == 0 && x0 + ITEM_COLS <= width) {
#pragma unroll
    for (int c = 0; c < ITEM_COLS / 4; ++c)
      kperf_write_out4(out, KPERF_UDIV(y * width + x0, 4) + c, vload4(c, row));
  } else
#endif
  {
#pragma unroll
    for (int i = 0; i < ITEM_COLS; ++i)
      if (x0 + i < width) kperf_write_out(out, y * width + x0 + i, row[i]);
  }
  // Past the region: outputs before the next computed column, when that one is past the grid.
  if (x0 + ITEM_COLS + OUT_KX / 2 >= width) {
    const float last = row[ITEM_COLS - 1 - (OUT_KX - 1 - OUT_KX / 2)];
#pragma unroll
    for (int i = 0; i < OUT_KX / 2; ++i)
      if (x0 + ITEM_COLS + i < width) kperf_write_out(out, y * width + x0 + ITEM_COLS + i, last);
  }
}
#endif

// Writes what this work-item owns from its computed outputs vals (KPERF_OUT_NQY x KPERF_OUT_NQX
// blocks of PY x VEC), rounded first to the stored precision, as the separate fill reads them.
inline void kperf_output_store(__global KPERF_OUT_T* out, int width, int height, float* vals) {
#pragma unroll
  for (int i = 0; i < KPERF_OUT_NQY * KPERF_OUT_NQX * PY * VEC; ++i) vals[i] = kperf_round_out(vals[i]);
#if OUT_KX == 1
  // rows:K: whole output rows of VEC, float4 stores where the rows allow them.
  const int gy0 = kperf_block_y0(), x0 = kperf_out_x0();
  int iy;
  float wy;
#pragma unroll
  for (int q = 0; q < OUT_PY; ++q) {
    if (!KPERF_OWNS_ROW(q)) continue;
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
#else
  // cols:K and center:K: rows of the region's ITEM_COLS columns from x0, each filled along x
  // from the computed columns (kperf_fused_x_row), then (center) mixed along y.
  const int x0 = kperf_out_x0();
  if (x0 + OUT_KX / 2 >= width) return;  // no computed column: the left neighbour writes these
  if (!KPERF_OWNS_ITEM_X) return;
#if OUT_KY == 1
  const int y0 = kperf_out_y0();
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    if (y0 + p >= height) return;
    float row[ITEM_COLS];
    kperf_fused_x_row(x0, width, &vals[p], PY * VEC, row);
    kperf_store_x_row(out, width, y0 + p, x0, row);
  }
#else
  // center:K: along x, then along y (bilinear in the separate fill's order).
  const int gy0 = kperf_block_y0();
  int iy;
  float wy;
#pragma unroll
  for (int qy = 0; qy < OUT_PY; ++qy) {
    if (!KPERF_OWNS_ROW(qy)) continue;
    const int cy = gy0 + kperf_item_row(qy);
#pragma unroll
    for (int dy = -(OUT_KY / 2); dy < OUT_KY; ++dy) {
      if (!kperf_fused_line(cy, dy, height, OUT_KY, &iy, &wy)) continue;
      float row[ITEM_COLS];
      kperf_fused_x_row(x0, width, &vals[qy * KPERF_OUT_NQX], 1, row);
#if OUT_LI
      if (iy) {
        float below[ITEM_COLS];
        kperf_fused_x_row(x0, width, &vals[(qy + 1) * KPERF_OUT_NQX], 1, below);
#pragma unroll
        for (int i = 0; i < ITEM_COLS; ++i) row[i] = mad(wy, below[i] - row[i], row[i]);
      }
#endif
      kperf_store_x_row(out, width, cy + dy, x0, row);
    }
  }
#endif
#endif
}
