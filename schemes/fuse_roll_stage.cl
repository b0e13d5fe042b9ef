// After one stage's app file in a rolling fused program (fuse_roll.cl): the stage's step, in its
// own shape (VEC and PY the launch's, RADIUS its app's), then the host's per-stage macros
// undefined. Not include-guarded: once per stage.
//
// kperf_roll_middle_K(h, src, dst, s, y0, width, height) for every stage but the last, and
// kperf_roll_last_K(h, src, out, s, y0, width, height) for the last: step s of the stage, for the
// calling row of work-items. h is the work-item's ring of PY + 2 RADIUS rows of row-pass values
// (private, zeroed), src the ring the stage reads (the input ring for stage 1, else the stage
// before's), dst its own ring. Each does nothing in a step whose new rows the strip does not need.
#if RADIUS != KPERF_FUSE_STAGE_RADIUS
#error "the app file's RADIUS is not its manifest's @radius"
#endif

#define KPERF_ROLL_V KPERF_FUSE_CAT(kperf_fuse_values_, KPERF_FUSE_STAGE)
// The halo of the stage's input (its radius and the later stages') and the rows of its ring.
#define KPERF_ROLL_IN_HALO (KPERF_FUSE_STAGE_HALO + RADIUS)
#if KPERF_FUSE_STAGE == 1
#define KPERF_ROLL_LEAD KPERF_ROLL_IN_LEAD
#define KPERF_ROLL_SRC_W KPERF_ROLL_IN_W
#else
#define KPERF_ROLL_LEAD 0
#define KPERF_ROLL_SRC_W KPERF_ROLL_INTER_W(KPERF_ROLL_IN_HALO)
#endif
#define KPERF_ROLL_CHUNKS ((KPERF_ROLL_LEAD + KPERF_WIN_W + 3) / 4)

enum { KPERF_FUSE_CAT(kperf_roll_h_len_, KPERF_FUSE_STAGE) = KPERF_WIN_H * KPERF_ROLL_V };

// One window row: KPERF_WIN_W elements of `row` from column base + KPERF_ROLL_LEAD, base the
// work-item's first (i VEC), as aligned 16-byte reads where VEC is a multiple of 4.
inline void KPERF_FUSE_CAT(kperf_roll_read_, KPERF_FUSE_STAGE)(__local const float* row, int base,
                                                               float* out) {
#if VEC % 4 == 0
  __local const float4* chunk = (__local const float4*)(row + base);
  float chunks[4 * KPERF_ROLL_CHUNKS];
#pragma unroll
  for (int ch = 0; ch < KPERF_ROLL_CHUNKS; ++ch) vstore4(chunk[ch], ch, chunks);
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) out[dx] = chunks[KPERF_ROLL_LEAD + dx];
#else
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) out[dx] = row[base + KPERF_ROLL_LEAD + dx];
#endif
}

#if KPERF_FUSE_STAGE == 1
// Input row y's window row: a kept row from the ring, a skipped one rebuilt from the kept rows
// above and below in [-r, height + r) as rows:k's tile rebuilds it (perforate_lines.cl:
// KPERF_RECONSTRUCT), r the first stage's radius.
inline void kperf_roll_input_row(__local const float* ring, int y, int first, int height, int base,
                                 float* out) {
#if KPERF_ROLL_PERFORATED
  const int offset = kperf_roll_mod(y + KPERF_ROLL_R1, SKIP);
  if (offset != 0) {
    const int above = y - offset, below = above + SKIP;
    const bool has_above = above >= -KPERF_ROLL_R1, has_below = below < height + KPERF_ROLL_R1;
#if RECON_LI
    if (has_above && has_below) {
      float b[KPERF_WIN_W];
      kperf_roll_read_1(kperf_roll_in_row((__local float*)ring, above, first), base, out);
      kperf_roll_read_1(kperf_roll_in_row((__local float*)ring, below, first), base, b);
      const float w = (float)offset / (float)SKIP;
#pragma unroll
      for (int dx = 0; dx < KPERF_WIN_W; ++dx) out[dx] = mad(w, b[dx] - out[dx], out[dx]);
      return;
    }
#endif
    const bool take_above = has_above && (!has_below || offset <= SKIP - offset);
    kperf_roll_read_1(kperf_roll_in_row((__local float*)ring, take_above ? above : below, first),
                      base, out);
    return;
  }
#endif
  kperf_roll_read_1(kperf_roll_in_row((__local float*)ring, y, first), base, out);
}
#endif

// The stage's step: its ring moved up PY rows, the PY new input rows from global row yf put
// through the row pass (a later stage's rows past the grid's edges take the edge's), then its
// PY x VEC outputs from the ring by the column pass.
inline void KPERF_FUSE_CAT(kperf_roll_step_, KPERF_FUSE_STAGE)(float* h, __local const float* src,
                                                               int yf, int y0, int height,
                                                               float* result) {
  const int base = (int)get_local_id(0) * VEC;
#pragma unroll
  for (int i = 0; i < 2 * RADIUS * KPERF_ROLL_V; ++i) h[i] = h[i + PY * KPERF_ROLL_V];
#pragma unroll
  for (int j = 0; j < PY; ++j) {
    const int y = yf + j;
    float* fresh = &h[(2 * RADIUS + j) * KPERF_ROLL_V];
    float row[KPERF_WIN_W];
#if KPERF_FUSE_STAGE == 1
    kperf_roll_input_row(src, y, kperf_roll_first_row(y0), height, base, row);
    KPERF_FUSE_CAT(kperf_fuse_row_pass_, KPERF_FUSE_STAGE)(row, fresh);
#else
#if RADIUS > 0
    if (y >= height) {  // below the grid: the last row's values
#pragma unroll
      for (int i = 0; i < KPERF_ROLL_V; ++i) fresh[i] = fresh[i - KPERF_ROLL_V];
      continue;
    }
#endif
    KPERF_FUSE_CAT(kperf_roll_read_, KPERF_FUSE_STAGE)(src + j * KPERF_ROLL_SRC_W, base, row);
    KPERF_FUSE_CAT(kperf_fuse_row_pass_, KPERF_FUSE_STAGE)(row, fresh);
#if RADIUS > 0
    if (y == 0) {  // the rows above the grid: row 0's values
#pragma unroll
      for (int i = 0; i < (2 * RADIUS + j) * KPERF_ROLL_V; ++i) h[i] = fresh[i % KPERF_ROLL_V];
    }
#endif
#endif
  }
  KPERF_FUSE_CAT(kperf_fuse_col_pass_, KPERF_FUSE_STAGE)(h, result);
}

// Whether step s of the stage passes input rows the strip needs, and the first of them.
inline bool KPERF_FUSE_CAT(kperf_roll_active_, KPERF_FUSE_STAGE)(int s, int y0, int* yf) {
  *yf = KPERF_ROLL_FEED_ROW(y0, s, KPERF_FUSE_STAGE, KPERF_ROLL_IN_HALO);
  return *yf + PY > y0 - KPERF_ROLL_IN_HALO && *yf < y0 + KPERF_ROLL_H + KPERF_ROLL_IN_HALO;
}

// The ring rows stage 1 reads at step s (the input ring, addressed by row), or the slot of the
// stage before's double-buffered ring that it wrote at step s - 1.
inline __local const float* KPERF_FUSE_CAT(kperf_roll_src_, KPERF_FUSE_STAGE)(
    __local const float* src, int s) {
#if KPERF_FUSE_STAGE == 1
  return src;
#else
  return src + ((s + 1) & 1) * PY * KPERF_ROLL_SRC_W;
#endif
}

#if KPERF_FUSE_STAGE < KPERF_FUSE_STAGES
#define KPERF_ROLL_DST_W KPERF_ROLL_INTER_W(KPERF_FUSE_STAGE_HALO)
// Stage output rows into slot s & 1 of its ring: column x0 - halo + i at i. Past the grid's edges
// the edge's values: the work-item holding column 0 (width - 1) writes them into the halo columns
// before (after) it, and none writes a column outside the grid.
inline void KPERF_FUSE_CAT(kperf_roll_put_, KPERF_FUSE_STAGE)(__local float* dst, int s,
                                                              const float* result, int width) {
  const int base = (int)get_local_id(0) * VEC;
  const int first = kperf_roll_x0() - KPERF_FUSE_STAGE_HALO;
  __local float* at = dst + (s & 1) * PY * KPERF_ROLL_DST_W + base;
  if (first >= 0 && first + KPERF_ROLL_WV <= width) {
#pragma unroll
    for (int p = 0; p < PY; ++p)
#if VEC % 4 == 0
#pragma unroll
      for (int c = 0; c < VEC / 4; ++c)
        ((__local float4*)(at + p * KPERF_ROLL_DST_W))[c] = vload4(c, &result[p * VEC]);
#else
#pragma unroll
      for (int v = 0; v < VEC; ++v) at[p * KPERF_ROLL_DST_W + v] = result[p * VEC + v];
#endif
    return;
  }
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const int x = first + base + v;
      const float value = result[p * VEC + v];
      __local float* cell = at + p * KPERF_ROLL_DST_W + v;
      if (x >= 0 && x < width) *cell = value;
#pragma unroll
      for (int e = 1; e <= KPERF_FUSE_STAGE_HALO; ++e) {
        if (x == 0 && e <= base + v) cell[-e] = value;
        if (x == width - 1) cell[e] = value;
      }
    }
}

inline void KPERF_FUSE_CAT(kperf_roll_middle_, KPERF_FUSE_STAGE)(float* h, __local const float* src,
                                                                 __local float* dst, int s, int y0,
                                                                 int width, int height) {
  int yf;
  if (!KPERF_FUSE_CAT(kperf_roll_active_, KPERF_FUSE_STAGE)(s, y0, &yf)) return;
  float result[PY * VEC];
  KPERF_FUSE_CAT(kperf_roll_step_, KPERF_FUSE_STAGE)
  (h, KPERF_FUSE_CAT(kperf_roll_src_, KPERF_FUSE_STAGE)(src, s), yf, y0, height, result);
#pragma unroll
  for (int j = 0; j < PY * VEC; ++j)
    result[j] = KPERF_FUSE_CAT(kperf_fuse_hand_on_, KPERF_FUSE_STAGE)(result[j]);
  KPERF_FUSE_CAT(kperf_roll_put_, KPERF_FUSE_STAGE)(dst, s, result, width);
}
#undef KPERF_ROLL_DST_W
#else
// The last stage: its rows of the strip from step KPERF_ROLL_FIRST_OUT on (whole steps: the strip
// is a multiple of PY rows), stored as every app kernel stores them, by the work-items whose
// columns lie in the block.
inline void KPERF_FUSE_CAT(kperf_roll_last_, KPERF_FUSE_STAGE)(float* h, __local const float* src,
                                                               __global KPERF_OUT_T* out, int s,
                                                               int y0, int width, int height) {
  int yf;
  if (!KPERF_FUSE_CAT(kperf_roll_active_, KPERF_FUSE_STAGE)(s, y0, &yf)) return;
  float result[PY * VEC];
  KPERF_FUSE_CAT(kperf_roll_step_, KPERF_FUSE_STAGE)
  (h, KPERF_FUSE_CAT(kperf_roll_src_, KPERF_FUSE_STAGE)(src, s), yf, y0, height, result);
  const int base = (int)get_local_id(0) * VEC;
  if (s >= KPERF_ROLL_FIRST_OUT && base < KPERF_ROLL_BLOCK_X)
    kperf_store_at(out, width, height, y0 + (s - KPERF_ROLL_FIRST_OUT) * PY,
                   kperf_roll_x0() + base, result);
}
#endif

#undef KPERF_ROLL_V
#undef KPERF_ROLL_IN_HALO
#undef KPERF_ROLL_LEAD
#undef KPERF_ROLL_SRC_W
#undef KPERF_ROLL_CHUNKS
#include "fuse_stage_undef.cl"
