// cols:k scheme: keep tile columns with (gx + RADIUS) mod SKIP == 0, rebuild the others.
#define KPERF_LINES_ARE_ROWS 0
#include "perforate_lines.cl"
