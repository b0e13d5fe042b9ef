// Accurate scheme: every tile element is loaded from global memory; nothing is reconstructed.
#define KPERF_SCHEME_IS_ACCURATE 1

inline void kperf_fill_tile(__local float* tile, __global const float* in, int width,
                            int height) {
  kperf_load_rows(tile, in, width, height, 0, 1, TILE_H);
  barrier(CLK_LOCAL_MEM_FENCE);
}
