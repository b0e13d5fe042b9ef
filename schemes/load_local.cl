// Load path "local" (default): each work-group fills a tile in local memory from a global
// buffer (aligned float4 rows where possible) and every work-item reads its window from it.
#define KPERF_INPUT_PARAM __global const KPERF_IN_T*
#define KPERF_LOAD_TILE 1
#define KPERF_LOAD_BUFFER 1
#define kperf_load kperf_load_buffer
