// Accurate scheme: every tile element is loaded from global memory; nothing is reconstructed.
// Its tile holds every element's own value whatever the group (the host builds it with
// -DKPERF_FRAME_FREE=1).
#define KPERF_SCHEME_IS_ACCURATE 1

// Under an output scheme along y only the windows of computed rows are read: tile rows
// c .. c + 2 RADIUS for each computed row c = q * OUT_KY + OUT_KY / 2, one run per period (the
// runs join where the window is at least the period).
#define KPERF_ACCURATE_RUN (2 * RADIUS + 1 < OUT_KY ? 2 * RADIUS + 1 : OUT_KY)

inline void kperf_fill_tile(__local float* tile, KPERF_INPUT_PARAM in, int width, int height) {
#if OUT_KY > 1
  // The next block's first computed row too where the tile is one period taller for it.
  kperf_load_rows(tile, in, width, height, OUT_KY / 2, OUT_KY, KPERF_ACCURATE_RUN,
                  (WG_Y * OUT_PY - 1 + (KPERF_TILE_EXT_Y > 0)) * KPERF_ACCURATE_RUN + 2 * RADIUS + 1);
#else
  kperf_load_rows(tile, in, width, height, 0, 1, 1, TILE_H);
#endif
  KPERF_FILL_BARRIER();
}

#define kperf_scheme_row_source kperf_identity_source
#define kperf_scheme_col_source kperf_identity_source
#define KPERF_COLS_OWN_SOURCE 1  // no column is rebuilt
