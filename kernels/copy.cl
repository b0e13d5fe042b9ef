// copy: the bandwidth reference every result's roofline is measured against, in scalar and
// float4 forms (the faster one counts).
__kernel void copy_scalar(__global const float* in, __global float* out, int n) {
  const int i = (int)get_global_id(0);
  if (i < n) out[i] = in[i];
}

__kernel void copy_vec4(__global const float4* in, __global float4* out, int n4) {
  const int i = (int)get_global_id(0);
  if (i < n4) out[i] = in[i];
}

// Halves at the stored sizes of the half precisions, eight per work-item (16 bytes): the raw
// bits copied; converted to float, scaled by a run-time 1 (so the compiler cannot fold the
// round trip) and back to half, the least work any f16 kernel that computes in float does; and
// converted to float (f16in's least work). References for half storage, not bounds: on an H200
// the f16in stencils beat the to-float copy.
__kernel void copy_half8(__global const uint4* in, __global uint4* out, int n8) {
  const int i = (int)get_global_id(0);
  if (i < n8) out[i] = in[i];
}

__kernel void copy_half8_convert(__global const uint4* in, __global uint4* out, int n8) {
  const int i = (int)get_global_id(0);
  if (i >= n8) return;
  const uint4 bits = in[i];
  const float8 v = vload_half8(0, (__private const half*)&bits) * (float)(n8 > 0);
  uint4 result;
  vstore_half8_rte(v, 0, (__private half*)&result);
  out[i] = result;
}

__kernel void copy_half8_to_float(__global const uint4* in, __global float4* out, int n8) {
  const int i = (int)get_global_id(0);
  if (i >= n8) return;
  const uint4 bits = in[i];
  const float8 v = vload_half8(0, (__private const half*)&bits);
  out[2 * i] = v.lo;
  out[2 * i + 1] = v.hi;
}
