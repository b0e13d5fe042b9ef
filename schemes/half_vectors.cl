// Four halves moved as one 8-byte access: the bits travel as a uint2 and convert in private
// memory. Measured on an H100 with NVIDIA's driver at 8192^2, accurate gaussian3 in f16 took
// 137 us with vload_half4 / vstore_half4 straight on global memory and 111 us this way. Needs no
// cl_khr_fp16: half appears only behind pointers.
#ifndef KPERF_HALF_VECTORS_CL
#define KPERF_HALF_VECTORS_CL
inline float4 kperf_load_half4(__global const half* p, int i4) {
  const uint2 bits = ((__global const uint2*)p)[i4];
  return vload_half4(0, (__private const half*)&bits);
}
inline void kperf_store_half4(float4 v, __global half* p, int i4) {
  uint2 bits;
  vstore_half4_rte(v, 0, (__private half*)&bits);
  ((__global uint2*)p)[i4] = bits;
}
#endif
