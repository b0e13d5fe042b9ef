// Accurate scheme: every tile element is loaded from global memory; nothing is reconstructed.
#define KPERF_SCHEME_IS_ACCURATE 1

inline void kperf_fill_tile(__local float* tile, __global const float* in, int width,
                            int height) {
  const int gy0 = kperf_tile_origin_y();
  const int gx0 = kperf_tile_origin_x();
  for (int i = kperf_local_linear_id(); i < TILE_H * TILE_W; i += WG_SIZE) {
    const int ty = i / TILE_W;
    const int tx = i - ty * TILE_W;
    TILE_AT(tile, ty, tx) = kperf_load(in, width, height, gy0 + ty, gx0 + tx);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
