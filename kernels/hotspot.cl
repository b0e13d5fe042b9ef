// hotspot: one step of Rodinia's 2-D transient thermal solver. The temperature tile is
// perforated by the selected scheme; the power value is read for the core only.
#define RADIUS 1
#include "kperf_tile.cl"

__kernel KPERF_WG_ATTR void kperf_app(__global const float* temp, __global float* out, int width,
                                      int height, __global const float* power,
                                      float step_div_cap, float rx_inv, float ry_inv,
                                      float rz_inv, float amb_temp) {
  __local float tile[TILE_ELEMS] __attribute__((aligned(16)));
  kperf_fill_tile(tile, temp, width, height);
  float win[KPERF_WIN_H * KPERF_WIN_W];
  kperf_gather_window(tile, win);
  const int y = (int)get_group_id(1) * BLOCK_Y + (int)get_local_id(1);
  const int x0 = (int)get_group_id(0) * BLOCK_X + (int)get_local_id(0) * VEC;
  float result[VEC];
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    const float* c = &win[KPERF_WIN_W + 1 + v];
    const float t = KPERF_AT(c, 0, 0);
    const float p = y < height && x0 + v < width ? power[y * width + x0 + v] : 0.0f;
    result[v] = t + step_div_cap * (p + (KPERF_AT(c, 1, 0) + KPERF_AT(c, -1, 0) - 2.0f * t) * ry_inv +
                                    (KPERF_AT(c, 0, 1) + KPERF_AT(c, 0, -1) - 2.0f * t) * rx_inv +
                                    (amb_temp - t) * rz_inv);
  }
  kperf_store(out, width, height, result);
}
