// Load path "image" (SagivTech's phase 4): the tile is filled with read_imagef from an
// image2d_t (CL_R, CL_FLOAT, or CL_HALF_FLOAT under a half precision); coordinates go through
// the perforation site's packing and are clamped as the buffer paths clamp them.
#define KPERF_INPUT_PARAM __read_only image2d_t
#define KPERF_LOAD_TILE 1
#define KPERF_LOAD_BUFFER 0

__constant sampler_t kperf_sampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

inline float kperf_load(__read_only image2d_t in, int width, int height, int gy, int gx) {
  return read_imagef(in, kperf_sampler, (int2)(kperf_src_col(gx, width), kperf_src_row(gy, height))).x;
}
