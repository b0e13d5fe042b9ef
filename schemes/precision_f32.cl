// Storage precision "f32" (default): input and output stored as float in global memory.
#define KPERF_IN_T float
#define KPERF_OUT_T float
#define KPERF_IN_BYTES 4
#define kperf_read_in(p, i) ((p)[i])
#define kperf_read_in4(p, i4) (((__global const float4*)(p))[i4])
#define kperf_read_in8(p, i8) vload8((i8), (p))
#define kperf_read_out(p, i) ((p)[i])
#define kperf_read_out4(p, i4) (((__global const float4*)(p))[i4])
#define kperf_write_out(p, i, v) ((p)[i] = (v))
#define kperf_write_out4(p, i4, v) (((__global float4*)(p))[i4] = (v))
#define kperf_write_out8(p, i8, v) kperf_store_float8((v), (p), (i8))
// The input's 16-byte load (KPERF_IN_VEC floats) and its place in the local tile.
#define KPERF_IN_VEC 4
#define KPERF_IN_VEC_T float4
#define kperf_read_in_vec(p, i) (((__global const float4*)(p))[i])
#define kperf_in_vec_to_local(dst, v) ((dst)[0] = (v))
#define kperf_round_out(v) (v)  // outputs are stored as computed
