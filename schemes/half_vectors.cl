// Halves moved as wide accesses: the bits travel as a uint2 (4 halves) or uint4 (8 halves, 16
// bytes, the width at which the H200 reaches its copy bandwidth) and convert in private memory.
// Measured on an H100 with NVIDIA's driver at 8192^2, accurate gaussian3 in f16 took 137 us with
// vload_half4 / vstore_half4 straight on global memory and 111 us through a uint2. Needs no
// cl_khr_fp16: half appears only behind pointers.
#ifndef KPERF_HALF_VECTORS_CL
#define KPERF_HALF_VECTORS_CL
inline float2 kperf_load_half2(__global const half* p, int i2) {
  const uint bits = ((__global const uint*)p)[i2];
  return vload_half2(0, (__private const half*)&bits);
}
inline float4 kperf_load_half4(__global const half* p, int i4) {
  const uint2 bits = ((__global const uint2*)p)[i4];
  return vload_half4(0, (__private const half*)&bits);
}
inline void kperf_store_half4(float4 v, __global half* p, int i4) {
  uint2 bits;
  vstore_half4_rte(v, 0, (__private half*)&bits);
  ((__global uint2*)p)[i4] = bits;
}
inline void kperf_store_half8(float8 v, __global half* p, int i8) {
  uint4 bits;
  vstore_half8_rte(v, 0, (__private half*)&bits);
  ((__global uint4*)p)[i8] = bits;
}
inline float8 kperf_load_half8(__global const half* p, int i8) {
  const uint4 bits = ((__global const uint4*)p)[i8];
  return vload_half8(0, (__private const half*)&bits);
}
// The input's 16-byte load (KPERF_IN_VEC halves) as raw bits, and its conversion into two float4
// slots of the local tile. Converting in integer registers instead (no private array) kept the
// loads 16 bytes wide on the H200, where NVIDIA's compiler splits these into two 8-byte loads,
// but cost more than it saved (median f16in 0.130 -> 0.137 ms at 8192^2): the hardware
// conversions stay.
#define KPERF_IN_VEC 8
#define KPERF_IN_VEC_T uint4
#define kperf_read_in_vec(p, i) (((__global const uint4*)(p))[i])
inline void kperf_in_vec_to_local(__local float4* dst, uint4 bits) {
  const float8 v = vload_half8(0, (__private const half*)&bits);
  dst[0] = v.lo;
  dst[1] = v.hi;
}
#endif
