// Accurate scheme: every tile element is loaded from global memory; nothing is reconstructed.
#define KPERF_SCHEME_IS_ACCURATE 1

inline void kperf_fill_tile(__local float* tile, KPERF_INPUT_PARAM in, int width, int height) {
  kperf_load_rows(tile, in, width, height, 0, 1, TILE_H);
  KPERF_FILL_BARRIER();
}

#define kperf_scheme_row_source kperf_identity_source
#define kperf_scheme_col_source kperf_identity_source
