// hotspot: one step of Rodinia's 2-D transient thermal solver. The temperature tile is
// perforated by the selected scheme; the power value is read for the core only.
#define RADIUS 1
#include "kperf_tile.cl"

__kernel KPERF_WG_ATTR void kperf_app(__global const float* temp, __global float* out, int width,
                                      int height, __global const float* power,
                                      float step_div_cap, float rx_inv, float ry_inv,
                                      float rz_inv, float amb_temp) {
  __local float tile[TILE_ELEMS];
  kperf_fill_tile(tile, temp, width, height);
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  if (x >= width || y >= height) return;
  __local const float* c =
      &TILE_AT(tile, (int)get_local_id(1) + RADIUS, (int)get_local_id(0) + RADIUS);
  const float t = KPERF_AT(c, 0, 0);
  const float north = KPERF_AT(c, -1, 0);
  const float south = KPERF_AT(c, 1, 0);
  const float east = KPERF_AT(c, 0, 1);
  const float west = KPERF_AT(c, 0, -1);
  const float delta = step_div_cap * (power[y * width + x] + (south + north - 2.0f * t) * ry_inv +
                                      (east + west - 2.0f * t) * rx_inv + (amb_temp - t) * rz_inv);
  out[y * width + x] = t + delta;
}
