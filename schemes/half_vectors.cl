// Halves moved as wide accesses: the bits travel as a uint2 (4 halves) or uint4 (8 halves, 16
// bytes, the width at which the H200 reaches its copy bandwidth) and convert in private memory.
// Measured on an H100 with NVIDIA's driver at 8192^2, accurate gaussian3 in f16 took 137 us with
// vload_half4 / vstore_half4 straight on global memory and 111 us through a uint2. Needs no
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
inline void kperf_store_half8(float8 v, __global half* p, int i8) {
  uint4 bits;
  vstore_half8_rte(v, 0, (__private half*)&bits);
  ((__global uint4*)p)[i8] = bits;
}
// A half's bits as the float it holds, in registers (no private array to reinterpret, which
// NVIDIA's compiler answered by splitting 16-byte loads into 8-byte ones): exact for zero,
// subnormals, normals, infinities and NaN.
inline float kperf_half_bits_to_float(uint h) {
  const uint m = h & 0x7fffu;
  const float magnitude = m >= 0x7c00u ? as_float((m << 13) | 0x7f800000u)  // inf, NaN
                                       : as_float(m << 13) * 0x1p112f;      // rebias 15 -> 127
  return as_float(as_uint(magnitude) | ((h & 0x8000u) << 16));
}
inline float4 kperf_half_pairs_to_float4(uint2 w) {
  return (float4)(kperf_half_bits_to_float(w.x & 0xffffu), kperf_half_bits_to_float(w.x >> 16),
                  kperf_half_bits_to_float(w.y & 0xffffu), kperf_half_bits_to_float(w.y >> 16));
}
inline float8 kperf_load_half8(__global const half* p, int i8) {
  const uint4 bits = ((__global const uint4*)p)[i8];
  return (float8)(kperf_half_pairs_to_float4(bits.xy), kperf_half_pairs_to_float4(bits.zw));
}
// The input's 16-byte load (KPERF_IN_VEC halves) as raw bits, and its conversion into two float4
// slots of the local tile.
#define KPERF_IN_VEC 8
#define KPERF_IN_VEC_T uint4
#define kperf_read_in_vec(p, i) (((__global const uint4*)(p))[i])
inline void kperf_in_vec_to_local(__local float4* dst, uint4 bits) {
  dst[0] = kperf_half_pairs_to_float4(bits.xy);
  dst[1] = kperf_half_pairs_to_float4(bits.zw);
}
#endif
