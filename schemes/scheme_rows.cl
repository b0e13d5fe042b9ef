// rows:k scheme: keep tile rows with (gy + RADIUS) mod SKIP == 0, rebuild the others.
#define KPERF_LINES_ARE_ROWS 1
#include "perforate_lines.cl"
