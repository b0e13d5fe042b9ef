// cols:k scheme: keep tile columns with (gx + RADIUS) mod SKIP == 0, rebuild the others.
#define KPERF_LINES_ARE_ROWS 0
#include "perforate_lines.cl"
#define kperf_scheme_row_source kperf_identity_source
#define kperf_scheme_col_source kperf_line_source
