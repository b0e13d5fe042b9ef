// hotspot: one step of Rodinia's 2-D transient thermal solver. The temperature window comes
// through the selected load path and scheme; the power value (stored at the input precision) is
// read for computed outputs only.
//
// @name hotspot
// @radius 1
// @metric mre
// @summary Rodinia hotspot transient thermal step
#define RADIUS 1
// The block function also takes the outputs' coordinates, the power grid and the coefficients.
#define KPERF_CALL(block_fn, win, result, y0, x0) \
  block_fn(win, result, y0, x0, width, height, power, step_div_cap, rx_inv, ry_inv, rz_inv, amb_temp)
#include "kperf_tile.cl"

inline void hotspot_block(const float* win, float* result, int y0, int x0, int width, int height,
                          __global const KPERF_IN_T* power, float step_div_cap, float rx_inv,
                          float ry_inv, float rz_inv, float amb_temp) {
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      const float* c = &win[(1 + p) * KPERF_WIN_W + 1 + v];
      const float t = KPERF_AT(c, 0, 0);
      const int y = y0 + p, x = x0 + v;
      // Outside the grid (a fused output fill's column left of it, never stored): no power.
      const float pw =
          y < height && x >= 0 && x < width ? kperf_read_in(power, y * width + x) : 0.0f;
      result[p * VEC + v] =
          t + step_div_cap * (pw + (KPERF_AT(c, 1, 0) + KPERF_AT(c, -1, 0) - 2.0f * t) * ry_inv +
                              (KPERF_AT(c, 0, 1) + KPERF_AT(c, 0, -1) - 2.0f * t) * rx_inv +
                              (amb_temp - t) * rz_inv);
    }
}

__kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM temp, __global KPERF_OUT_T* out,
                                      int width, int height, __global const KPERF_IN_T* power,
                                      float step_div_cap, float rx_inv, float ry_inv,
                                      float rz_inv, float amb_temp) {
  KPERF_BODY(hotspot_block, temp, out, width, height);
}
