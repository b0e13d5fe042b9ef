// Shared engine of the rows:k and cols:k schemes: one tile line (row or column) in SKIP is
// loaded, chosen by global coordinates so neighbouring work-groups agree; the others are
// rebuilt from the nearest kept lines of the same tile in local memory (nn or li).
// The including scheme sets KPERF_LINES_ARE_ROWS to 1 (rows) or 0 (columns).
//
// Columns are rebuilt in place (a local-memory pass and a barrier). Rows are rebuilt as each
// work-item reads its window from local memory (kperf_line_source): a missing row's values are
// computed from the kept rows by the same expression, never stored back, which saves a barrier
// and a local pass and gives the same values; -DKPERF_MATERIALIZE_ROWS=1 restores the in-place
// pass for comparison.

#if KPERF_LINES_ARE_ROWS
#define KPERF_N_LINES TILE_H
#define KPERF_LINE_LEN TILE_W
#define KPERF_BLOCK_LINES BLOCK_Y
#define KPERF_GROUP ((int)get_group_id(1))
#define KPERF_ELEM(tile, line, pos) TILE_AT(tile, line, pos)
#else
#define KPERF_N_LINES TILE_W
#define KPERF_LINE_LEN TILE_H
#define KPERF_BLOCK_LINES BLOCK_X
#define KPERF_GROUP ((int)get_group_id(0))
#define KPERF_ELEM(tile, line, pos) TILE_AT(tile, pos, line)
#endif

// The value of a missing line's element from its nearest kept lines `above` (offset lines
// before it) and `below` (SKIP - offset after it); either may lie outside the tile.
#define KPERF_RECONSTRUCT(T, value, get_above, get_below, above, below, offset)   \
  {                                                                                \
    const bool has_above = (above) >= 0;                                           \
    const bool has_below = (below) < KPERF_N_LINES;                                \
    if (has_above && has_below) {                                                  \
      if (RECON_LI) {                                                              \
        const float w = (float)(offset) / (float)SKIP;                             \
        value = mad((T)w, (get_below) - (get_above), (get_above));                 \
      } else {                                                                     \
        value = (offset) <= SKIP - (offset) ? (get_above) : (get_below);           \
      }                                                                            \
    } else {                                                                       \
      value = has_above ? (get_above) : (get_below);                               \
    }                                                                              \
  }

#ifndef KPERF_MATERIALIZE_ROWS
#define KPERF_MATERIALIZE_ROWS 0
#endif
#if KPERF_LINES_ARE_ROWS && !KPERF_MATERIALIZE_ROWS
#define KPERF_FUSED_ROWS 1
#endif

// Tile line `first` of group `group`'s tile (along the perforated axis) is the first one whose
// global coordinate (+ RADIUS) is a multiple of SKIP; tile line 0 is global line
// group * KPERF_BLOCK_LINES - RADIUS.
inline int kperf_first_kept_line_of(int group) {
  return (SKIP - (group * KPERF_BLOCK_LINES) % SKIP) % SKIP;
}
inline int kperf_first_kept_line(void) { return kperf_first_kept_line_of(KPERF_GROUP); }

// Where tile line t's values come from: lines `above` and `below` mixed with weight w (value =
// mad(w, T[below] - T[above], T[above])), or one line when above == below (kept line or nn).
// The fused row gather and the global load path read through it.
inline void kperf_line_source_at(int t, int offset, int* above, int* below, float* w) {
  *w = 0.0f;
  if (offset == 0) {
    *above = *below = t;
    return;
  }
  const int a = t - offset, b = a + SKIP;
  const bool has_above = a >= 0, has_below = b < KPERF_N_LINES;
  if (has_above && has_below) {
    if (RECON_LI) {
      *above = a;
      *below = b;
      *w = (float)offset / (float)SKIP;
    } else {
      *above = *below = offset <= SKIP - offset ? a : b;
    }
  } else {
    *above = *below = has_above ? a : b;
  }
}

// The source of line t of group `group`'s tile (the global load path reads through it, also for
// a neighbouring group's tile).
inline void kperf_line_source(int group, int t, int* above, int* below, float* w) {
  kperf_line_source_at(t, (t - kperf_first_kept_line_of(group) + SKIP) % SKIP, above, below, w);
}

#ifdef KPERF_FUSED_ROWS
#if OUT_KY == 1 && PY % SKIP == 0 && RECON_LI
// Interpolated window rows always read the kept row below (see kperf_window_row_source), which
// for the tile's last rows lies past it: the tile is allocated SKIP - 1 rows taller (never
// loaded; those reads are selected away).
#define KPERF_TILE_EXTRA_ROWS (SKIP - 1)
#endif

// The source of row dy of the window whose first row is tile row row0 (the fused gather): rows
// above and below mixed with weight w where *mix is set, else row above alone. Where
// work-items' row blocks are whole periods, row0 and the group's first kept row are multiples
// of SKIP, so the offset is the compile-time dy % SKIP and the kept-row pattern folds away;
// otherwise one modulo per work-item, not one per window row.
inline void kperf_window_row_source(int row0, int dy, int* above, int* below, float* w, int* mix) {
#if OUT_KY == 1 && PY % SKIP == 0
  const int offset = dy % SKIP;
  // Compile-time sources, so that window rows sharing one read the same local addresses and the
  // compiler merges their arithmetic. row0 is a kept row at or below tile row 0, so the kept row
  // above is always in the tile. Only rows past the tile's last kept row lack one below, and
  // their offsets are at most (KPERF_N_LINES - 1) % SKIP: beyond that it is in the tile too.
  const int a = row0 + dy - offset;
  const bool has_below = offset > (KPERF_N_LINES - 1) % SKIP;
  *w = 0.0f;
  *mix = 0;
  if (offset == 0 || (!RECON_LI && offset <= SKIP - offset)) {
    *above = *below = a;
    return;
  }
  if (RECON_LI) {
    // Both kept rows at compile-time addresses; past the tile's last kept row (nn there) the
    // mixed value is selected away at run time instead of choosing an address.
    *above = a;
    *below = a + SKIP;
    *w = (float)offset / (float)SKIP;
    *mix = has_below || a + SKIP < KPERF_N_LINES;
    return;
  }
  if (has_below) {
    *above = *below = a + SKIP;
    return;
  }
#else
  int offset = (row0 - kperf_first_kept_line() + SKIP) % SKIP + dy % SKIP;
  if (offset >= SKIP) offset -= SKIP;
#endif
  kperf_line_source_at(row0 + dy, offset, above, below, w);
  *mix = *above != *below;
}
#endif

inline void kperf_fill_tile(__local float* tile, KPERF_INPUT_PARAM in, int width, int height) {
  const int lid = kperf_local_linear_id();
  const int first = kperf_first_kept_line();
  const int n_loaded = (KPERF_N_LINES - first + SKIP - 1) / SKIP;

#if KPERF_LINES_ARE_ROWS
  kperf_load_rows(tile, in, width, height, first, SKIP, 1, n_loaded);
#else
  // Kept columns are strided in memory: consecutive work-items take consecutive kept columns
  // of one row so at least the row's cache lines are shared.
  const int gy0 = kperf_tile_origin_y();
  const int gx0 = kperf_tile_origin_x();
  for (int i = lid; i < n_loaded * KPERF_LINE_LEN; i += WG_SIZE) {
    const int pos = i / n_loaded;
    const int line = first + (i - pos * n_loaded) * SKIP;
    KPERF_ELEM(tile, line, pos) = kperf_load(in, width, height, gy0 + pos, gx0 + line);
  }
#endif
#ifdef KPERF_FUSED_ROWS
  KPERF_FILL_BARRIER();  // the only barrier: rows are rebuilt as windows are read
#else
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
#ifndef KPERF_FUSED_ROWS
  // Missing line number t (SKIP - 1 per period) maps to tile line start + period*SKIP + offset,
  // where start = first - SKIP is the (possibly virtual) kept line before the tile.
  const int start = first - SKIP;
  const int periods = (KPERF_N_LINES - 1 - start) / SKIP + 1;
  const int n_slots = periods * (SKIP - 1);
#if KPERF_LINES_ARE_ROWS && KPERF_VEC_ROWS
  // Whole local rows move as float4s (the padding columns too; they are never read).
  __local float4* rows4 = (__local float4*)tile;
  for (int i = lid; i < n_slots * TILE_CHUNKS; i += WG_SIZE) {
    const int t = i / TILE_CHUNKS;
    const int c = i - t * TILE_CHUNKS;
#else
  for (int i = lid; i < n_slots * KPERF_LINE_LEN; i += WG_SIZE) {
#if KPERF_LINES_ARE_ROWS
    const int t = i / KPERF_LINE_LEN;
    const int pos = i - t * KPERF_LINE_LEN;
#else
    const int pos = i / n_slots;
    const int t = i - pos * n_slots;
#endif
#endif
    const int period = t / (SKIP - 1);
    const int offset = t - period * (SKIP - 1) + 1;
    const int line = start + period * SKIP + offset;
    if (line < 0 || line >= KPERF_N_LINES) continue;
    const int above = line - offset;  // nearest kept line before, may lie outside the tile
    const int below = above + SKIP;   // nearest kept line after, likewise
#if KPERF_LINES_ARE_ROWS && KPERF_VEC_ROWS
    float4 value;
    KPERF_RECONSTRUCT(float4, value, rows4[above * TILE_CHUNKS + c], rows4[below * TILE_CHUNKS + c],
                      above, below, offset);
    rows4[line * TILE_CHUNKS + c] = value;
#else
    float value;
    KPERF_RECONSTRUCT(float, value, KPERF_ELEM(tile, above, pos), KPERF_ELEM(tile, below, pos),
                      above, below, offset);
    KPERF_ELEM(tile, line, pos) = value;
#endif
  }
  KPERF_FILL_BARRIER();
#endif  // !KPERF_FUSED_ROWS
}
