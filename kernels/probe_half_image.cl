// Reads every pixel of a CL_R / CL_HALF_FLOAT image back as float: the runner checks a device
// converts half images correctly before the image load path uses one (some drivers list the
// format but return wrong values).
__constant sampler_t kperf_probe_sampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void kperf_probe_half_image(__read_only image2d_t image, __global float* out, int width) {
  const int x = (int)get_global_id(0), y = (int)get_global_id(1);
  out[y * width + x] = read_imagef(image, kperf_probe_sampler, (int2)(x, y)).x;
}
