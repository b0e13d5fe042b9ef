// Perforation on the device (default): the input buffer is the whole grid; an element's place
// is its own coordinates clamped to the grid.
inline int kperf_src_row(int gy, int height) { return clamp(gy, 0, height - 1); }
inline int kperf_src_col(int gx, int width) { return clamp(gx, 0, width - 1); }
inline int kperf_src_width(int width) { return width; }
#define KPERF_SRC_COLS_DIRECT 1  // column gx of the grid is element gx of its row
