// kperf tile contract, part 2: a work-item's window, from the local tile or from global memory
// (the load paths' gathers, wide and 16-bit reads), and the tile fill and gather macros.
// Included by kperf_tile.cl, after the contract and the tile fill; not built alone.
#ifndef KPERF_KPERF_WINDOWS_CL
#define KPERF_KPERF_WINDOWS_CL

// The (PY + 2 RADIUS) x (VEC + 2 RADIUS) neighbourhood of a work-item's outputs (under an output
// scheme: of one computed output), gathered into private memory; output (p, v)'s own element is
// at row RADIUS + p, column RADIUS + v.
#define KPERF_WIN_W (VEC + 2 * RADIUS)
#define KPERF_WIN_H (PY + 2 * RADIUS)
#define KPERF_AT(c, dy, dx) (c)[(dy) * KPERF_WIN_W + (dx)]

// An id per window row, equal for two rows exactly where one holds a copy of the other, known at
// compile time: under rows:2 nn with whole periods per work-item (PY even, no output scheme along
// y) a window starts on a kept row, so odd rows copy the row above on every load path and at
// the grid's edges. Elsewhere each row's own index. An app may skip work on equal rows (median's
// column stage), where the compiler cannot see that two values are equal.
inline int kperf_window_row_id(int dy) {
#if defined(KPERF_FUSED_ROWS) && OUT_KY == 1 && SKIP == 2 && PY % 2 == 0 && !RECON_LI
  return dy - dy % 2;
#else
  return dy;
#endif
}

// Tile row r's elements col0 .. col0 + KPERF_WIN_W - 1 (one window row).
inline void kperf_tile_row(__local const float* tile, int r, int col0, float* row) {
#if KPERF_VEC_ROWS && VEC % 4 == 0
  // The columns sit at local offsets TILE_OFF .. TILE_OFF + KPERF_WIN_W - 1 from the aligned
  // index col0 (VEC 4 or 8 implies OUT_KX 1, so col0 = VEC lx): read the float4s covering them
  // (no bank conflicts).
#define KPERF_FIRST_CHUNK (TILE_OFF / 4)
#define KPERF_N_CHUNKS ((TILE_OFF + KPERF_WIN_W - 1) / 4 - KPERF_FIRST_CHUNK + 1)
  float chunks[KPERF_N_CHUNKS * 4];
#pragma unroll
  for (int ch = 0; ch < KPERF_N_CHUNKS; ++ch)
    vstore4(((__local const float4*)tile)[r * TILE_CHUNKS + col0 / 4 + KPERF_FIRST_CHUNK + ch], ch,
            chunks);
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = chunks[TILE_OFF - 4 * KPERF_FIRST_CHUNK + dx];
#else
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = TILE_AT(tile, r, col0 + dx);
#endif
}

#if RECON_LI
// An interpolated window row: row moves to weight w towards below where mix is set (a select,
// so that a below that is not loaded never reaches the output).
inline void kperf_mix_row(float* row, const float* below, float w, int mix) {
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
    const float mixed = mad(w, below[dx] - row[dx], row[dx]);
    row[dx] = mix ? mixed : row[dx];
  }
}
#endif

// From the local tile: the window whose first element is tile element (row0, col0).
inline void kperf_gather_window(__local const float* tile, float* win, int row0, int col0) {
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
#ifdef KPERF_FUSED_ROWS
    int above, below, mix;
    float w;
    kperf_window_row_source(row0, dy, &above, &below, &w, &mix);
    kperf_tile_row(tile, above, col0, &win[dy * KPERF_WIN_W]);
#if RECON_LI  // nn always has above == below: one read
    if (above != below) {
      float b[KPERF_WIN_W];
      kperf_tile_row(tile, below, col0, b);
      kperf_mix_row(&win[dy * KPERF_WIN_W], b, w, mix);
    }
#endif
#else
    kperf_tile_row(tile, row0 + dy, col0, &win[dy * KPERF_WIN_W]);
#endif
  }
}

// The global load path reads window rows as wide loads (kperf_gather_window_global) where the
// columns need no reconstruction (the scheme says KPERF_COLS_OWN_SOURCE) and sit unpacked in
// the input buffer (KPERF_SRC_COLS_DIRECT), with VEC 4 or 8; -DKPERF_GLOBAL_VEC_ROWS=0 turns it
// off for comparison.
#ifndef KPERF_GLOBAL_VEC_ROWS
#if defined(KPERF_COLS_OWN_SOURCE) && KPERF_SRC_COLS_DIRECT && KPERF_LOAD_BUFFER && \
    (VEC == 4 || VEC == 8)
#define KPERF_GLOBAL_VEC_ROWS 1
#else
#define KPERF_GLOBAL_VEC_ROWS 0
#endif
#endif
#if KPERF_GLOBAL_VEC_ROWS
// The RADIUS elements on each side of a window row as one aligned 4-element load per side, where
// RADIUS is 2 to 4 and the input is stored as floats: a warp's narrow load touches the same cache
// lines as a 4-wide one, so this halves the side loads of a 5x5 window. Measured on an H200 at
// 8192^2 (gaussian5, sobel5; accurate, rows:2 nn and li) it made f32 up to 8 % faster, and
// halves, which then convert elements they drop, up to 6 % slower; radius 1 would gain no load.
// -DKPERF_GLOBAL_SIDE_CHUNKS=0 or 1 chooses.
#ifndef KPERF_GLOBAL_SIDE_CHUNKS
#define KPERF_GLOBAL_SIDE_CHUNKS (RADIUS >= 2 && RADIUS <= 4 && KPERF_IN_BYTES == 4)
#endif
// 16-bit elements with RADIUS 2: each side is one aligned 4-byte word, whose two elements the row
// needs (no conversion is wasted): 2 side loads instead of 4. -DKPERF_GLOBAL_SIDE_WORDS=0 or 1.
#ifndef KPERF_GLOBAL_SIDE_WORDS
#define KPERF_GLOBAL_SIDE_WORDS (RADIUS == 2 && KPERF_IN_BYTES == 2 && !KPERF_GLOBAL_SIDE_CHUNKS)
#endif
// Whether the window row whose first output column is gxo reads wide: rows of whole VEC blocks,
// gxo a block's first column, neither the row's first block nor its last (the side loads stay in
// the row).
inline bool kperf_wide_row_inside(int width, int gxo) {
  return width % VEC == 0 && gxo % VEC == 0 && gxo >= RADIUS && gxo + VEC + RADIUS <= width;
}
// Window row elements from global index i (the first output's column, where
// kperf_wide_row_inside holds): VEC as one aligned load, RADIUS on each side. Every load is
// addressed from one pointer to element i (aligned to VEC elements), so a row costs one address
// and its side loads take constant offsets.
inline void kperf_read_window_row(KPERF_INPUT_PARAM in, int i, float* row) {
  KPERF_INPUT_PARAM at = in + i;
#if VEC == 8
  vstore8(kperf_read_in8(at, 0), 0, row + RADIUS);
#else
  vstore4(kperf_read_in4(at, 0), 0, row + RADIUS);
#endif
#if KPERF_GLOBAL_SIDE_CHUNKS
  float sides[8];
  vstore4(kperf_read_in4(at, -1), 0, sides);
  vstore4(kperf_read_in4(at, VEC / 4), 1, sides);
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = sides[4 - RADIUS + r];
    row[RADIUS + VEC + r] = sides[4 + r];
  }
#elif KPERF_GLOBAL_SIDE_WORDS
  vstore2(kperf_read_in2(at, -1), 0, row);
  vstore2(kperf_read_in2(at, VEC / 2), 0, row + RADIUS + VEC);
#else
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = kperf_read_in(at, r - RADIUS);
    row[RADIUS + VEC + r] = kperf_read_in(at, VEC + r);
  }
#endif
}
#endif

#if KPERF_GLOBAL_VEC_ROWS
// The source rows of window row dy on the wide global path (kperf_gather_window_global).
inline void kperf_wide_row_source(int group_y, int row0, int dy, int* ra, int* rb, float* wr,
                                  int* mix) {
#if defined(KPERF_FUSED_ROWS) && OUT_KY == 1 && PY % SKIP == 0
  // The fused local gather's compile-time row sources: rows that repeat a kept row read the
  // same addresses, and the compiler merges their loads and arithmetic.
  kperf_window_row_source(row0, dy, ra, rb, wr, mix);
#else
  kperf_scheme_row_source(group_y, row0 + dy, ra, rb, wr);
  *mix = *ra != *rb;
#endif
}
#endif

// Under li a window row's bits are those of two rows to mix; with SKIP 2 the weight of every
// mixed row is 1/2, which an app on halves can apply exactly (half_pairs.cl's kperf_pair_mid).
#if KPERF_GLOBAL_VEC_ROWS && KPERF_IN_BYTES == 2 && (!RECON_LI || SKIP == 2)
#define KPERF_GLOBAL_BITS_ROWS 1
#if RECON_LI
#define KPERF_BITS_BELOW_ELEMS (KPERF_WIN_H * KPERF_WIN_W)
#else
#define KPERF_BITS_BELOW_ELEMS 1
#endif
// A window row's 16-bit elements as stored, for an app that works on halves as they are
// (median's packed selection): the addresses of kperf_read_window_row, no conversion.
inline void kperf_read_window_row_bits(KPERF_INPUT_PARAM in, int i, ushort* row) {
  __global const ushort* elements = (__global const ushort*)in + i;
#if KPERF_PROBE_NO_LOADS  // bits made from the addresses, as kperf_read_in's probe makes values
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx)
    row[dx] = (ushort)KPERF_PROBE_BITS(elements, dx - RADIUS);
#else
#if VEC == 8
  const uint4 block = *(__global const uint4*)elements;
  const uint words[4] = {block.s0, block.s1, block.s2, block.s3};
#else
  const uint2 block = *(__global const uint2*)elements;
  const uint words[2] = {block.s0, block.s1};
#endif
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    row[RADIUS + 2 * k] = (ushort)words[k];
    row[RADIUS + 2 * k + 1] = (ushort)(words[k] >> 16);
  }
#pragma unroll
  for (int r = 0; r < RADIUS; ++r) {
    row[r] = elements[r - RADIUS];
    row[RADIUS + VEC + r] = elements[VEC + r];
  }
#endif
}

// kperf_gather_window_global's window as element bits, where its rows read wide; false
// otherwise (the caller then takes the float path). Under li, window row dy is the mean of its
// row in win and its row in below (KPERF_BITS_BELOW_ELEMS) where mixes[dy] is set, as
// kperf_mix_row's select would take it; the caller mixes them.
inline bool kperf_gather_window_bits(KPERF_INPUT_PARAM in, int width, int height, ushort* win,
                                     ushort* below, bool* mixes, int group_y, int group_x,
                                     int row0, int col0) {
  const int gy0 = group_y * KPERF_GROUP_STEP_Y - RADIUS;
  const int gxo = group_x * KPERF_GROUP_STEP_X - KPERF_BLOCK_X_SHIFT + col0;  // first output column
  if (!kperf_wide_row_inside(width, gxo)) return false;
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    int ra, rb, mix;
    float wr;
    kperf_wide_row_source(group_y, row0, dy, &ra, &rb, &wr, &mix);
    kperf_read_window_row_bits(in, kperf_src_row(gy0 + ra, height) * width + gxo,
                               &win[dy * KPERF_WIN_W]);
    mixes[dy] = false;
#if RECON_LI
    if (ra != rb) {
      kperf_read_window_row_bits(in, kperf_src_row(gy0 + rb, height) * width + gxo,
                                 &below[dy * KPERF_WIN_W]);
      mixes[dy] = mix;
    }
#endif
  }
  return true;
}
#endif

// Elements col0 .. col0 + KPERF_WIN_W - 1 of row t of this group's tile, a row that is its own
// source, read from global memory (the global load path's kept rows).
inline void kperf_global_row(KPERF_INPUT_PARAM in, int width, int height, int t, int col0,
                             float* row) {
  const int gy = kperf_tile_origin_y() + t, gx = kperf_tile_origin_x() + col0;
#if KPERF_GLOBAL_VEC_ROWS
  if (kperf_wide_row_inside(width, gx + RADIUS)) {
    kperf_read_window_row(in, kperf_src_row(gy, height) * width + gx + RADIUS, row);
    return;
  }
#endif
#pragma unroll
  for (int dx = 0; dx < KPERF_WIN_W; ++dx) row[dx] = kperf_load(in, width, height, gy, gx + dx);
}

// The global load path: no tile. Each window element is read from global memory where the
// scheme's tile would take its value from (kperf_scheme_row_source / _col_source), with the
// same reconstruction arithmetic, so every load path gives the same outputs. The window is the
// one whose first element is element (row0, col0) of the tile of group (group_y, group_x): this
// work-item's group, or a neighbour whose computed output this one needs.
inline void kperf_gather_window_global(KPERF_INPUT_PARAM in, int width, int height, float* win,
                                       int group_y, int group_x, int row0, int col0) {
  const int gy0 = group_y * KPERF_GROUP_STEP_Y - RADIUS;
  const int gx0 = group_x * KPERF_GROUP_STEP_X - KPERF_BLOCK_X_SHIFT - RADIUS;
#if KPERF_GLOBAL_VEC_ROWS
  // Where every column is its own source and the window's row lies inside the grid, each window
  // row is one aligned VEC-wide load of the outputs' own columns and RADIUS elements on each
  // side (neighbouring work-items' columns, which the caches serve): a few wide loads instead of
  // one narrow load per tap. The same sources and arithmetic as the general path below.
  const int gxo = gx0 + col0 + RADIUS;  // the window's first output column
  if (kperf_wide_row_inside(width, gxo)) {
#pragma unroll
    for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
      int ra, rb, mix;
      float wr;
      kperf_wide_row_source(group_y, row0, dy, &ra, &rb, &wr, &mix);
      float row[KPERF_WIN_W];
      kperf_read_window_row(in, kperf_src_row(gy0 + ra, height) * width + gxo, row);
#if RECON_LI
      if (ra != rb) {
        float below[KPERF_WIN_W];
        kperf_read_window_row(in, kperf_src_row(gy0 + rb, height) * width + gxo, below);
        kperf_mix_row(row, below, wr, mix);
      }
#endif
#pragma unroll
      for (int dx = 0; dx < KPERF_WIN_W; ++dx) win[dy * KPERF_WIN_W + dx] = row[dx];
    }
    return;
  }
#endif
#pragma unroll
  for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
    int ra, rb;
    float wr;
    kperf_scheme_row_source(group_y, row0 + dy, &ra, &rb, &wr);
#pragma unroll
    for (int dx = 0; dx < KPERF_WIN_W; ++dx) {
      int ca, cb;
      float wc;
      kperf_scheme_col_source(group_x, col0 + dx, &ca, &cb, &wc);
      float v = kperf_load(in, width, height, gy0 + ra, gx0 + ca);
#if RECON_LI  // every scheme rebuilds along one axis at most
      if (ca != cb) v = mad(wc, kperf_load(in, width, height, gy0 + ra, gx0 + cb) - v, v);
      if (ra != rb) v = mad(wr, kperf_load(in, width, height, gy0 + rb, gx0 + ca) - v, v);
#endif
      win[dy * KPERF_WIN_W + dx] = v;
    }
  }
}

// Declares the local tile at kernel scope and fills it, where the load path has one.
#if KPERF_LOAD_TILE
#define KPERF_TILE_FILL(in, width, height)                             \
  __local float kperf_tile[TILE_ELEMS] __attribute__((aligned(16))); \
  kperf_fill_tile(kperf_tile, in, width, height)
#else
#define KPERF_TILE_FILL(in, width, height)
#endif

// Fills float win[KPERF_WIN_H * KPERF_WIN_W] with a work-item's window by the selected load path.
#if KPERF_LOAD_TILE
#define KPERF_GATHER(win, in, width, height) \
  KPERF_TILE_FILL(in, width, height);        \
  kperf_gather_window(kperf_tile, win, kperf_item_row(0), kperf_item_col(0))
#else
#define KPERF_GATHER(win, in, width, height)                                              \
  kperf_gather_window_global(in, width, height, win, (int)get_group_id(1),               \
                             (int)get_group_id(0), kperf_item_row(0), kperf_item_col(0))
#endif

#endif  // KPERF_KPERF_WINDOWS_CL
