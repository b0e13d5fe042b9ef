// Two halves in one 32-bit register, for order statistics on half-precision data: min and max of
// both lanes in one instruction where the device has one, and the mean of two rows (rows:2 li).
// A selection (median) returns one of its elements, so where every element is a half value it
// selects the same element on packed halves as on floats: exact, at twice the elements per
// instruction.
//
// KPERF_HALF_PAIR_OPS says how the lanes are computed:
//   0  none: callers keep their float code (the default where the device has no packed half
//      min/max reachable from OpenCL C 1.2);
//   1  emulated with float min/max on the unpacked lanes: slower than floats, for testing the
//      packed data flow on any device (PoCL);
//   2  NVIDIA compute capability 8.0 and up (KPERF_NV_SM, set by the host from
//      cl_nv_device_attribute_query): PTX min.f16x2 / max.f16x2 and the packing conversions, as
//      inline assembly (NVIDIA's OpenCL C has no cl_khr_fp16).
// The ops return the non-NaN lane where one lane is NaN, as fmin / fmax do.
#ifndef KPERF_HALF_PAIRS_CL
#define KPERF_HALF_PAIRS_CL

#ifndef KPERF_HALF_PAIR_OPS
#if defined(KPERF_NV_SM) && KPERF_NV_SM >= 80
#define KPERF_HALF_PAIR_OPS 2
#else
#define KPERF_HALF_PAIR_OPS 0
#endif
#endif

typedef uint kperf_half_pair;  // lane 0 in the low 16 bits

#if KPERF_HALF_PAIR_OPS == 2
// lo and hi rounded to half (exact for half values) into lanes 0 and 1.
inline kperf_half_pair kperf_pair_pack(float lo, float hi) {
  kperf_half_pair p;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(hi), "f"(lo));
  return p;
}
inline float2 kperf_pair_unpack(kperf_half_pair p) {
  float lo, hi;
  asm("{ .reg .f16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }"
      : "=f"(lo), "=f"(hi)
      : "r"(p));
  return (float2)(lo, hi);
}
inline kperf_half_pair kperf_pair_min(kperf_half_pair a, kperf_half_pair b) {
  kperf_half_pair p;
  asm("min.f16x2 %0, %1, %2;" : "=r"(p) : "r"(a), "r"(b));
  return p;
}
inline kperf_half_pair kperf_pair_max(kperf_half_pair a, kperf_half_pair b) {
  kperf_half_pair p;
  asm("max.f16x2 %0, %1, %2;" : "=r"(p) : "r"(a), "r"(b));
  return p;
}
// (a + b) / 2 in each lane, rounded to half: the sum rounded to half and halved. Halving is
// exact wherever the sum is at least 2^-13, and a sum of halves below that is a multiple of 2^-24
// that a half holds exactly, so this is one rounding of the exact mean, unless the sum overflows
// (|a + b| >= 65520). Float arithmetic holds that mean exactly where the two exponents differ by
// at most 12 (or one lane is zero), so there a float mean rounded to half is the same half.
inline kperf_half_pair kperf_pair_mid(kperf_half_pair a, kperf_half_pair b) {
  kperf_half_pair p;
  asm("{ .reg .b32 s, h; add.rn.f16x2 s, %1, %2; mov.b32 h, 0x38003800; mul.rn.f16x2 %0, s, h; }"
      : "=r"(p)
      : "r"(a), "r"(b));
  return p;
}
#elif KPERF_HALF_PAIR_OPS == 1
inline kperf_half_pair kperf_pair_pack(float lo, float hi) {
  kperf_half_pair p;
  vstore_half2_rte((float2)(lo, hi), 0, (__private half*)&p);
  return p;
}
inline float2 kperf_pair_unpack(kperf_half_pair p) {
  return vload_half2(0, (__private const half*)&p);
}
inline kperf_half_pair kperf_pair_min(kperf_half_pair a, kperf_half_pair b) {
  const float2 x = kperf_pair_unpack(a), y = kperf_pair_unpack(b);
  return kperf_pair_pack(fmin(x.x, y.x), fmin(x.y, y.y));
}
inline kperf_half_pair kperf_pair_max(kperf_half_pair a, kperf_half_pair b) {
  const float2 x = kperf_pair_unpack(a), y = kperf_pair_unpack(b);
  return kperf_pair_pack(fmax(x.x, y.x), fmax(x.y, y.y));
}
// Two halves whose exponents differ by at most 12 sum exactly in float, so packing the sum
// rounds as add.rn.f16x2 does.
inline kperf_half_pair kperf_pair_mid(kperf_half_pair a, kperf_half_pair b) {
  const float2 x = kperf_pair_unpack(a), y = kperf_pair_unpack(b);
  const float2 sum = kperf_pair_unpack(kperf_pair_pack(x.x + y.x, x.y + y.y));
  return kperf_pair_pack(sum.x * 0.5f, sum.y * 0.5f);
}
#elif KPERF_HALF_PAIR_OPS != 0
#error "KPERF_HALF_PAIR_OPS: 0 (none), 1 (emulated) or 2 (NVIDIA PTX, KPERF_NV_SM >= 80)"
#endif

#endif  // KPERF_HALF_PAIRS_CL
