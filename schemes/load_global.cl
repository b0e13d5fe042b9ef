// Load path "global" (Paraprox's baseline, SagivTech's phase 1): no local memory; every window
// tap is read from the global buffer, clamped to the grid. Under an input scheme a skipped line
// is read from the kept line its reconstruction would use (SYprox's device perforation).
#define KPERF_INPUT_PARAM __global const KPERF_IN_T*
#define KPERF_LOAD_TILE 0
#define KPERF_LOAD_BUFFER 1
#define kperf_load kperf_load_buffer
