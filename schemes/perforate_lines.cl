// Shared engine of the rows:k and cols:k schemes: one tile line (row or column) in SKIP is
// loaded, chosen by global coordinates so neighbouring work-groups agree; the others are
// rebuilt in local memory from the nearest loaded lines of the same tile (nn or li).
// The including scheme sets KPERF_LINES_ARE_ROWS to 1 (rows) or 0 (columns).

#if KPERF_LINES_ARE_ROWS
#define KPERF_N_LINES TILE_H
#define KPERF_LINE_LEN TILE_W
#define KPERF_LINE_BASE ((int)get_group_id(1) * WG_Y)  // global line of tile line 0, plus RADIUS
#define KPERF_ELEM(tile, line, pos) TILE_AT(tile, line, pos)
#else
#define KPERF_N_LINES TILE_W
#define KPERF_LINE_LEN TILE_H
#define KPERF_LINE_BASE ((int)get_group_id(0) * WG_X)
#define KPERF_ELEM(tile, line, pos) TILE_AT(tile, pos, line)
#endif

inline void kperf_fill_tile(__local float* tile, __global const float* in, int width,
                            int height) {
  const int gy0 = kperf_tile_origin_y();
  const int gx0 = kperf_tile_origin_x();
  const int lid = kperf_local_linear_id();
  // Tile line `first` is the first one whose global coordinate (+ RADIUS) is a multiple of SKIP.
  const int first = (SKIP - KPERF_LINE_BASE % SKIP) % SKIP;
  const int n_loaded = (KPERF_N_LINES - first + SKIP - 1) / SKIP;

  // Load only the kept lines. Consecutive work-items take consecutive x so reads coalesce.
  for (int i = lid; i < n_loaded * KPERF_LINE_LEN; i += WG_SIZE) {
#if KPERF_LINES_ARE_ROWS
    const int j = i / KPERF_LINE_LEN;
    const int pos = i - j * KPERF_LINE_LEN;
#else
    const int pos = i / n_loaded;
    const int j = i - pos * n_loaded;
#endif
    const int line = first + j * SKIP;
#if KPERF_LINES_ARE_ROWS
    KPERF_ELEM(tile, line, pos) = kperf_load(in, width, height, gy0 + line, gx0 + pos);
#else
    KPERF_ELEM(tile, line, pos) = kperf_load(in, width, height, gy0 + pos, gx0 + line);
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Missing line number t (SKIP - 1 per period) maps to tile line start + period*SKIP + offset,
  // where start = first - SKIP is the (possibly virtual) kept line before the tile.
  const int start = first - SKIP;
  const int periods = (KPERF_N_LINES - 1 - start) / SKIP + 1;
  const int n_slots = periods * (SKIP - 1);
  for (int i = lid; i < n_slots * KPERF_LINE_LEN; i += WG_SIZE) {
#if KPERF_LINES_ARE_ROWS
    const int t = i / KPERF_LINE_LEN;
    const int pos = i - t * KPERF_LINE_LEN;
#else
    const int pos = i / n_slots;
    const int t = i - pos * n_slots;
#endif
    const int period = t / (SKIP - 1);
    const int offset = t - period * (SKIP - 1) + 1;
    const int line = start + period * SKIP + offset;
    if (line < 0 || line >= KPERF_N_LINES) continue;
    const int above = line - offset;         // nearest kept line before, may lie outside the tile
    const int below = above + SKIP;          // nearest kept line after, likewise
    const bool has_above = above >= 0;
    const bool has_below = below < KPERF_N_LINES;
    float value;
    if (has_above && has_below) {
#if RECON_LI
      const float w = (float)offset / (float)SKIP;
      value = mad(w, KPERF_ELEM(tile, below, pos) - KPERF_ELEM(tile, above, pos),
                  KPERF_ELEM(tile, above, pos));
#else
      value = offset <= SKIP - offset ? KPERF_ELEM(tile, above, pos) : KPERF_ELEM(tile, below, pos);
#endif
    } else {
      value = has_above ? KPERF_ELEM(tile, above, pos) : KPERF_ELEM(tile, below, pos);
    }
    KPERF_ELEM(tile, line, pos) = value;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
