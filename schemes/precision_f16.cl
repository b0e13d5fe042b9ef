// Storage precision "f16": input and output stored as half in global memory (vload_half /
// vstore_half_rte, core OpenCL 1.2); compute in float, outputs rounded to nearest even.
#define KPERF_IN_T half
#define KPERF_OUT_T half
#define KPERF_IN_BYTES 2
#define KPERF_IN_HALF 1  // every input element is a half value (half_pairs.cl)
#define KPERF_OUT_HALF 1  // outputs are stored as half, rounded to nearest even
#include "half_vectors.cl"
#define kperf_read_in(p, i) vload_half((i), (p))
#define kperf_read_in2(p, i2) kperf_load_half2((p), (i2))
#define kperf_read_in4(p, i4) kperf_load_half4((p), (i4))
#define kperf_read_in8(p, i8) kperf_load_half8((p), (i8))
#define kperf_read_out(p, i) vload_half((i), (p))
#define kperf_read_out4(p, i4) kperf_load_half4((p), (i4))
#define kperf_write_out(p, i, v) vstore_half_rte((v), (i), (p))
#define kperf_write_out4(p, i4, v) kperf_store_half4((v), (p), (i4))
#define kperf_write_out8(p, i8, v) kperf_store_half8((v), (p), (i8))
// The value a float holds once stored as half (round to nearest even), without cl_khr_fp16.
inline float kperf_round_out(float v) {
  ushort bits;
  vstore_half_rte(v, 0, (__private half*)&bits);
  return vload_half(0, (__private const half*)&bits);
}
