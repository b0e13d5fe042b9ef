// Storage precision "bf16": input and output stored as bfloat16, the upper 16 bits of a float
// rounded to nearest even (NaN kept quiet), held as ushort in global memory. The conversions are
// integer operations: core OpenCL 1.2, no extension. Compute stays float.
#define KPERF_IN_T ushort
#define KPERF_OUT_T ushort
#define KPERF_IN_BYTES 2

inline float kperf_bf16_to_float(uint bits) { return as_float(bits << 16); }
inline ushort kperf_float_to_bf16(float value) {
  const uint u = as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // NaN stays NaN
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// Two bfloat16 in one 32-bit word (the lower one first in memory).
inline float2 kperf_bf16_pair(uint w) { return (float2)(as_float(w << 16), as_float(w & 0xffff0000u)); }
inline float4 kperf_bf16_quad(uint2 w) { return (float4)(kperf_bf16_pair(w.x), kperf_bf16_pair(w.y)); }

#define kperf_read_in(p, i) kperf_bf16_to_float((p)[i])
#define kperf_read_in2(p, i2) kperf_bf16_pair(((__global const uint*)(p))[i2])
#define kperf_read_in4(p, i4) kperf_bf16_quad(((__global const uint2*)(p))[i4])
inline float8 kperf_load_bf16_8(__global const ushort* p, int i8) {
  const uint4 w = ((__global const uint4*)p)[i8];
  return (float8)(kperf_bf16_quad(w.xy), kperf_bf16_quad(w.zw));
}
#define kperf_read_in8(p, i8) kperf_load_bf16_8((p), (i8))
#define kperf_read_out(p, i) kperf_bf16_to_float((p)[i])
#define kperf_read_out4(p, i4) kperf_bf16_quad(((__global const uint2*)(p))[i4])
#define kperf_write_out(p, i, v) ((p)[i] = kperf_float_to_bf16(v))
inline void kperf_store_bf16_4(float4 v, __global ushort* p, int i4) {
  ((__global ushort4*)p)[i4] = (ushort4)(kperf_float_to_bf16(v.x), kperf_float_to_bf16(v.y),
                                         kperf_float_to_bf16(v.z), kperf_float_to_bf16(v.w));
}
#define kperf_write_out4(p, i4, v) kperf_store_bf16_4((v), (p), (i4))
inline void kperf_store_bf16_8(float8 v, __global ushort* p, int i8) {
  ((__global ushort8*)p)[i8] =
      (ushort8)(kperf_float_to_bf16(v.s0), kperf_float_to_bf16(v.s1), kperf_float_to_bf16(v.s2),
                kperf_float_to_bf16(v.s3), kperf_float_to_bf16(v.s4), kperf_float_to_bf16(v.s5),
                kperf_float_to_bf16(v.s6), kperf_float_to_bf16(v.s7));
}
#define kperf_write_out8(p, i8, v) kperf_store_bf16_8((v), (p), (i8))
#define kperf_round_out(v) kperf_bf16_to_float(kperf_float_to_bf16(v))
// The tile's 16-byte loads: eight bfloat16, converted into two float4 slots.
#define KPERF_IN_VEC 8
#define KPERF_IN_VEC_T uint4
#define kperf_read_in_vec(p, i) (((__global const uint4*)(p))[i])
inline void kperf_in_vec_to_local(__local float4* dst, uint4 w) {
  dst[0] = kperf_bf16_quad(w.xy);
  dst[1] = kperf_bf16_quad(w.zw);
}
