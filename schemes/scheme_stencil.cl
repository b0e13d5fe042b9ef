// Stencil scheme: only the core (one element per work-item) is loaded; the halo takes the
// core element at the clamped tile coordinates (nearest neighbour; li is the same here).

#define KPERF_HALO_ELEMS (TILE_H * TILE_W - WG_X * WG_Y)

inline void kperf_fill_tile(__local float* tile, __global const float* in, int width,
                            int height) {
  const int lx = (int)get_local_id(0);
  const int ly = (int)get_local_id(1);
  TILE_AT(tile, ly + RADIUS, lx + RADIUS) =
      kperf_load(in, width, height, kperf_tile_origin_y() + ly + RADIUS,
                 kperf_tile_origin_x() + lx + RADIUS);
  barrier(CLK_LOCAL_MEM_FENCE);
  // Halo index h walks the top band, the bottom band, then the left/right side columns.
  for (int h = kperf_local_linear_id(); h < KPERF_HALO_ELEMS; h += WG_SIZE) {
    int ty, tx;
    if (h < 2 * RADIUS * TILE_W) {
      const int band_row = h / TILE_W;
      tx = h - band_row * TILE_W;
      ty = band_row < RADIUS ? band_row : band_row + WG_Y;
    } else {
      const int s = h - 2 * RADIUS * TILE_W;
      const int row = s / (2 * RADIUS);
      const int c = s - row * (2 * RADIUS);
      ty = RADIUS + row;
      tx = c < RADIUS ? c : c + WG_X;
    }
    TILE_AT(tile, ty, tx) = TILE_AT(tile, clamp(ty, RADIUS, RADIUS + WG_Y - 1),
                                    clamp(tx, RADIUS, RADIUS + WG_X - 1));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
