// After one stage's app file in a fused program (fuse_stage_begin.cl): the stage's functions, in
// its own shape, then the host's per-stage macros undefined. Not include-guarded: once per stage.
//
// kperf_fuse_compute_K(src, row0, col0, aligned, result): the stage's PY x VEC outputs whose
// window's first element is element (row0, col0) of its input region, a local array: the tile for
// stage 1 (element (r, c) at r * TILE_STRIDE + TILE_OFF + c), the previous stage's outputs
// otherwise (at r * stride + c, rows 16-byte aligned). `aligned`: col0 is a multiple of 4, so
// window rows move as aligned float4 reads where the stage computes whole float4s.
//
// kperf_fuse_step_K(src, dst, width, height), for every stage but the last: the stage's outputs
// over the block plus KPERF_FUSE_STAGE_HALO into dst (the next stage's input region), rounded as
// the unfused chain would store them, then a barrier.
#if RADIUS != KPERF_FUSE_STAGE_RADIUS
#error "the app file's RADIUS is not its manifest's @radius"
#endif

#if KPERF_FUSE_STAGE == 1
#define KPERF_FUSE_SRC_STRIDE kperf_fuse_tile_stride
#define KPERF_FUSE_SRC_OFF kperf_fuse_tile_off
#define KPERF_FUSE_SRC_VEC4 kperf_fuse_tile_vec4
#else
#define KPERF_FUSE_SRC_STRIDE KPERF_FUSE_INTER_STRIDE(RADIUS + KPERF_FUSE_STAGE_HALO)
#define KPERF_FUSE_SRC_OFF 0
#define KPERF_FUSE_SRC_VEC4 1
#endif
// Element col0's place in its aligned chunk (col0 a multiple of 4), and the chunks a window row
// spans from there.
#define KPERF_FUSE_LEAD (KPERF_FUSE_SRC_OFF & 3)
#define KPERF_FUSE_ROW_CHUNKS ((KPERF_FUSE_LEAD + KPERF_WIN_W + 3) / 4)

inline void KPERF_FUSE_CAT(kperf_fuse_compute_, KPERF_FUSE_STAGE)(__local const float* src,
                                                                  int row0, int col0,
                                                                  bool aligned, float* result) {
  float win[KPERF_WIN_H * KPERF_WIN_W];
#if VEC % 4 == 0
  if (KPERF_FUSE_SRC_VEC4 && aligned) {
#pragma unroll
    for (int dy = 0; dy < KPERF_WIN_H; ++dy) {
      __local const float4* chunk =
          (__local const float4*)(src + (row0 + dy) * KPERF_FUSE_SRC_STRIDE + KPERF_FUSE_SRC_OFF -
                                  KPERF_FUSE_LEAD) +
          (col0 >> 2);
      float chunks[4 * KPERF_FUSE_ROW_CHUNKS];
#pragma unroll
      for (int ch = 0; ch < KPERF_FUSE_ROW_CHUNKS; ++ch) vstore4(chunk[ch], ch, chunks);
#pragma unroll
      for (int dx = 0; dx < KPERF_WIN_W; ++dx)
        win[dy * KPERF_WIN_W + dx] = chunks[KPERF_FUSE_LEAD + dx];
    }
  } else
#endif
  {
#pragma unroll
    for (int dy = 0; dy < KPERF_WIN_H; ++dy)
#pragma unroll
      for (int dx = 0; dx < KPERF_WIN_W; ++dx)
        win[dy * KPERF_WIN_W + dx] =
            src[(row0 + dy) * KPERF_FUSE_SRC_STRIDE + KPERF_FUSE_SRC_OFF + col0 + dx];
  }
  KPERF_FUSE_CAT(kperf_fuse_block_, KPERF_FUSE_STAGE)(win, result);
}

#if KPERF_FUSE_STAGE < KPERF_FUSE_STAGES
// The stage's region: the block plus its halo, KPERF_FUSE_REGION_H x KPERF_FUSE_REGION_W outputs.
#define KPERF_FUSE_REGION_W (kperf_fuse_block_x + 2 * KPERF_FUSE_STAGE_HALO)
#define KPERF_FUSE_REGION_H (kperf_fuse_block_y + 2 * KPERF_FUSE_STAGE_HALO)
#define KPERF_FUSE_DST_STRIDE KPERF_FUSE_INTER_STRIDE(KPERF_FUSE_STAGE_HALO)

// A chunk no larger than the region (-DKPERF_FUSE_CHUNK_VEC_K / _PY_K may name one): else a
// negative array size stops the build.
typedef char KPERF_FUSE_CAT(kperf_fuse_chunk_fits_, KPERF_FUSE_STAGE)[
    (VEC <= KPERF_FUSE_REGION_W) + (PY <= KPERF_FUSE_REGION_H) == 2 ? 1 : -1];

inline void KPERF_FUSE_CAT(kperf_fuse_step_, KPERF_FUSE_STAGE)(__local const float* src,
                                                               __local float* dst, int width,
                                                               int height) {
  // Chunks of PY x VEC outputs over the region: first those whose columns lie wholly inside it
  // (their windows start on a multiple of 4), then one per chunk row at the region's right edge,
  // moved left to end there: it stores only the columns no chunk before it holds. Numbered so,
  // the edge chunks (another gather) fall to the last work-items together. A chunk row at the
  // bottom moves up likewise and stores only its own rows.
  const int full_x = KPERF_FUSE_REGION_W / VEC;
  const int chunks_x = (KPERF_FUSE_REGION_W + VEC - 1) / VEC;
  const int chunks_y = (KPERF_FUSE_REGION_H + PY - 1) / PY;
  for (int i = kperf_local_linear_id(); i < chunks_x * chunks_y; i += WG_SIZE) {
    int qy, col0, own_x0;
    bool aligned;
    if (i < full_x * chunks_y) {
      qy = i / full_x;
      col0 = (i - qy * full_x) * VEC;
      own_x0 = col0;
      aligned = true;
    } else {
      qy = i - full_x * chunks_y;
      col0 = KPERF_FUSE_REGION_W - VEC;
      own_x0 = full_x * VEC;
      aligned = false;
    }
    const int own_y0 = qy * PY, row0 = min(own_y0, KPERF_FUSE_REGION_H - PY);
    float result[PY * VEC];
    KPERF_FUSE_CAT(kperf_fuse_compute_, KPERF_FUSE_STAGE)(src, row0, col0, aligned, result);
#pragma unroll
    for (int j = 0; j < PY * VEC; ++j)
      result[j] = KPERF_FUSE_CAT(kperf_fuse_hand_on_, KPERF_FUSE_STAGE)(result[j]);
#if VEC % 4 == 0
    if (aligned && row0 == own_y0) {
#pragma unroll
      for (int p = 0; p < PY; ++p)
#pragma unroll
        for (int c = 0; c < VEC / 4; ++c)
          ((__local float4*)(dst + (row0 + p) * KPERF_FUSE_DST_STRIDE + col0))[c] =
              vload4(c, &result[p * VEC]);
      continue;
    }
#endif
#pragma unroll
    for (int p = 0; p < PY; ++p)
#pragma unroll
      for (int v = 0; v < VEC; ++v)
        if (row0 + p >= own_y0 && col0 + v >= own_x0)
          dst[(row0 + p) * KPERF_FUSE_DST_STRIDE + col0 + v] = result[p * VEC + v];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Where the region passes the grid's edge, its outputs there are the grid's edge's: the next
  // stage reads them as the unfused chain reads its input buffer, clamped to the grid.
  const int y0 = kperf_block_y0() - KPERF_FUSE_STAGE_HALO;
  const int x0 = kperf_block_x0() - KPERF_FUSE_STAGE_HALO;
  if (y0 < 0 || x0 < 0 || y0 + KPERF_FUSE_REGION_H > height || x0 + KPERF_FUSE_REGION_W > width) {
    for (int i = kperf_local_linear_id(); i < KPERF_FUSE_REGION_H * KPERF_FUSE_REGION_W;
         i += WG_SIZE) {
      const int ry = i / KPERF_FUSE_REGION_W, rx = i - ry * KPERF_FUSE_REGION_W;
      const int cy = clamp(y0 + ry, 0, height - 1) - y0, cx = clamp(x0 + rx, 0, width - 1) - x0;
      if (cy != ry || cx != rx)
        dst[ry * KPERF_FUSE_DST_STRIDE + rx] = dst[cy * KPERF_FUSE_DST_STRIDE + cx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#undef KPERF_FUSE_REGION_W
#undef KPERF_FUSE_REGION_H
#undef KPERF_FUSE_DST_STRIDE
#endif  // KPERF_FUSE_STAGE < KPERF_FUSE_STAGES

#undef KPERF_FUSE_SRC_STRIDE
#undef KPERF_FUSE_SRC_OFF
#undef KPERF_FUSE_SRC_VEC4
#undef KPERF_FUSE_LEAD
#undef KPERF_FUSE_ROW_CHUNKS
#include "fuse_stage_undef.cl"
