// rows:k scheme: keep tile rows with (gy + RADIUS) mod SKIP == 0, rebuild the others.
#define KPERF_LINES_ARE_ROWS 1
#include "perforate_lines.cl"
#define kperf_scheme_row_source kperf_line_source
#define kperf_scheme_col_source kperf_identity_source
#define KPERF_COLS_OWN_SOURCE 1  // no column is rebuilt
