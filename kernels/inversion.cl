// inversion: 255 - v. The accurate kernel on a buffer reads global memory directly (no tile, as
// in the papers); perforated variants, the image load path and output schemes go through the
// (radius 0) tile contract so rows:k / cols:k can skip lines.
//
// @name inversion
// @radius 0
// @metric mre
// @summary 255 - v
// @accurate global
#define RADIUS 0
#include "kperf_tile.cl"

#if defined(KPERF_SCHEME_IS_ACCURATE) && KPERF_LOAD_BUFFER && OUT_KY == 1 && OUT_KX == 1
__kernel KPERF_WG_ATTR void kperf_app(__global const KPERF_IN_T* in, __global KPERF_OUT_T* out,
                                      int width, int height) {
  const int y0 = kperf_out_y0();
  const int x0 = kperf_out_x0();
#pragma unroll
  for (int p = 0; p < PY; ++p) {
    const int y = y0 + p;
    if (y >= height) return;
#if VEC == 4
    if ((width & 3) == 0 && x0 + 3 < width) {
      const int i4 = (y * width + x0) / 4;
      kperf_write_out4(out, i4, (float4)(255.0f) - kperf_read_in4(in, i4));
      continue;
    }
#elif VEC == 8
    if ((width & 7) == 0 && x0 + 7 < width) {
      const int i8 = (y * width + x0) / 8;
      kperf_write_out8(out, i8, (float8)(255.0f) - kperf_read_in8(in, i8));
      continue;
    }
#endif
    for (int v = 0; v < VEC; ++v)
      if (x0 + v < width)
        kperf_write_out(out, y * width + x0 + v, 255.0f - kperf_read_in(in, y * width + x0 + v));
  }
}
#else
inline float inversion_point(const float* c) { return 255.0f - c[0]; }
KPERF_IMAGE_KERNEL(inversion_point)
#endif
