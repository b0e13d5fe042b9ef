// Stencil scheme: only the core (each work-item's region of ITEM_ROWS x ITEM_COLS elements) is
// loaded; the halo takes the core element at the clamped tile coordinates (nearest neighbour;
// li is the same here).

#define KPERF_HALO_ELEMS (TILE_H * TILE_W - BLOCK_X * BLOCK_Y)

inline void kperf_fill_tile(__local float* tile, KPERF_INPUT_PARAM in, int width, int height) {
  const int lx = (int)get_local_id(0);
  const int ly = (int)get_local_id(1);
  const int gy0 = kperf_out_y0();
  const int gx = kperf_out_x0();
#if KPERF_VEC_ROWS && VEC == 4 && KPERF_LOAD_BUFFER
  // Tile column RADIUS + 4 lx sits at local offset PAD + 4 lx: an aligned float4 slot.
  if ((width & 3) == 0 && gx + 3 < width && gy0 + ITEM_ROWS - 1 < height) {
    float4 core[ITEM_ROWS];
#pragma unroll
    for (int p = 0; p < ITEM_ROWS; ++p) core[p] = kperf_read_in4(in, ((gy0 + p) * width + gx) / 4);
#pragma unroll
    for (int p = 0; p < ITEM_ROWS; ++p)
      ((__local float4*)tile)[(ly * ITEM_ROWS + p + RADIUS) * TILE_CHUNKS + lx + KPERF_TILE_PAD / 4] =
          core[p];
  } else
#endif
  {
#pragma unroll
    for (int p = 0; p < ITEM_ROWS; ++p)
#pragma unroll
      for (int v = 0; v < ITEM_COLS; ++v)
        TILE_AT(tile, ly * ITEM_ROWS + p + RADIUS, lx * ITEM_COLS + v + RADIUS) =
            kperf_load(in, width, height, gy0 + p, gx + v);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Halo index h walks the top band, the bottom band, then the left/right side columns.
  for (int h = kperf_local_linear_id(); h < KPERF_HALO_ELEMS; h += WG_SIZE) {
    int ty, tx;
    if (h < 2 * RADIUS * TILE_W) {
      const int band_row = h / TILE_W;
      tx = h - band_row * TILE_W;
      ty = band_row < RADIUS ? band_row : band_row + BLOCK_Y;
    } else {
      const int s = h - 2 * RADIUS * TILE_W;
      const int row = s / (2 * RADIUS);
      const int c = s - row * (2 * RADIUS);
      ty = RADIUS + row;
      tx = c < RADIUS ? c : c + BLOCK_X;
    }
    TILE_AT(tile, ty, tx) = TILE_AT(tile, clamp(ty, RADIUS, RADIUS + BLOCK_Y - 1),
                                    clamp(tx, RADIUS, RADIUS + BLOCK_X - 1));
  }
  KPERF_FILL_BARRIER();
}

// A halo line takes the nearest core line of the tile (the same in every group's tile).
inline void kperf_scheme_row_source(int group, int t, int* a, int* b, float* w) {
  kperf_identity_source(group, clamp(t, RADIUS, RADIUS + BLOCK_Y - 1), a, b, w);
}
inline void kperf_scheme_col_source(int group, int t, int* a, int* b, float* w) {
  kperf_identity_source(group, clamp(t, RADIUS, RADIUS + BLOCK_X - 1), a, b, w);
}
