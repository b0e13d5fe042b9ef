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
