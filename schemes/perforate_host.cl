// Perforation on the host (SYprox): the host uploads only the kept lines of rows:SKIP
// (KPERF_PACKED_ROWS 1) or cols:SKIP (0), packed: packed line p holds grid line
// clamp(p * SKIP - RADIUS), for p < P = ceil((n - 1 + RADIUS) / SKIP) + 1, so every line the
// scheme keeps ((g + RADIUS) mod SKIP == 0) is packed line (g + RADIUS) / SKIP, and lines past the
// grid's end map to the last packed one, which holds the grid's last line as clamping would.
// Columns are packed within each row, so a tile row's kept columns are contiguous in memory.
// Only kept lines are ever asked for: the scheme never reads the others. Lines before the grid
// (g < -RADIUS, which blocks that overlap their left or upper neighbour reach) map to packed line
// 0, which holds the grid's first line as clamping would.
#ifndef KPERF_PACKED_ROWS
#define KPERF_PACKED_ROWS 1
#endif
inline int kperf_packed_lines(int n) { return (n - 1 + RADIUS + SKIP - 1) / SKIP + 1; }
#define KPERF_SRC_COLS_DIRECT KPERF_PACKED_ROWS  // columns packed within rows otherwise
#if KPERF_PACKED_ROWS
inline int kperf_src_row(int gy, int height) { return clamp((gy + RADIUS) / SKIP, 0, kperf_packed_lines(height) - 1); }
inline int kperf_src_col(int gx, int width) { return clamp(gx, 0, width - 1); }
inline int kperf_src_width(int width) { return width; }
#else
inline int kperf_src_row(int gy, int height) { return clamp(gy, 0, height - 1); }
inline int kperf_src_col(int gx, int width) { return clamp((gx + RADIUS) / SKIP, 0, kperf_packed_lines(width) - 1); }
inline int kperf_src_width(int width) { return kperf_packed_lines(width); }
#endif
