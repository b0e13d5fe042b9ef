// Storage precision "f32" (default): input and output stored as float in global memory.
#define KPERF_IN_T float
#define KPERF_OUT_T float
#define KPERF_IN_BYTES 4
#define kperf_read_in(p, i) ((p)[i])
#define kperf_read_in4(p, i4) (((__global const float4*)(p))[i4])
#define kperf_read_out(p, i) ((p)[i])
#define kperf_read_out4(p, i4) (((__global const float4*)(p))[i4])
#define kperf_write_out(p, i, v) ((p)[i] = (v))
#define kperf_write_out4(p, i4, v) (((__global float4*)(p))[i4] = (v))
