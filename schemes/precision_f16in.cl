// Storage precision "f16in" (SYprox mixed precision): the input is stored as half in global
// memory and read with vload_half (core OpenCL 1.2, no cl_khr_fp16 needed); compute and output
// stay float.
#define KPERF_IN_T half
#define KPERF_OUT_T float
#define KPERF_IN_BYTES 2
#define KPERF_IN_HALF 1  // every input element is a half value (half_pairs.cl)
#include "half_vectors.cl"
#define kperf_read_in(p, i) vload_half((i), (p))
#define kperf_read_in2(p, i2) kperf_load_half2((p), (i2))
#define kperf_read_in4(p, i4) kperf_load_half4((p), (i4))
#define kperf_read_in8(p, i8) kperf_load_half8((p), (i8))
#define kperf_read_out(p, i) ((p)[i])
#define kperf_read_out4(p, i4) (((__global const float4*)(p))[i4])
#define kperf_write_out(p, i, v) ((p)[i] = (v))
#define kperf_write_out4(p, i4, v) (((__global float4*)(p))[i4] = (v))
#define kperf_write_out8(p, i8, v) kperf_store_float8((v), (p), (i8))
#define kperf_round_out(v) (v)  // outputs are stored as computed
