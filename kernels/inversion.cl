// inversion: 255 - v. The accurate kernel reads global memory directly (no tile, as in the
// papers); perforated variants stage the (radius 0) tile so rows:k / cols:k can skip lines.
#define RADIUS 0
#include "kperf_tile.cl"

#ifdef KPERF_SCHEME_IS_ACCURATE
__kernel KPERF_WG_ATTR void kperf_app(__global const float* in, __global float* out, int width,
                                      int height) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  if (x < width && y < height) out[y * width + x] = 255.0f - in[y * width + x];
}
#else
inline float inversion_point(__local const float* c) { return 255.0f - c[0]; }
KPERF_IMAGE_KERNEL(inversion_point)
#endif
