// Where a launch's work-groups lie (schemes.hpp): a group's block of outputs, how many groups a
// grid takes along each axis, and where blocks overlap (output schemes that read a neighbour's
// computed line).
#include "schemes.hpp"

namespace kperf {

WorkGroup block_of(const Variant& v, WorkGroup wg) {
  const WorkGroup b = wg.block();
  return {b.x * v.output.kx(), b.y * v.output.ky(), 1, 1};
}

bool blocks_overlap_y(const Variant& v, WorkGroup wg) {
  return !v.output.none() && v.fill().overlaps_blocks && v.output.ky() > 1 &&
         v.output_recon == Recon::kLi && v.scheme->frame_free && wg.y * wg.py > 1;
}

int group_step_y(const Variant& v, WorkGroup wg) {
  return block_of(v, wg).y - (blocks_overlap_y(v, wg) ? v.output.ky() : 0);
}

int groups_along_y(const Variant& v, WorkGroup wg, int height) {
  const int block_y = block_of(v, wg).y;
  if (!blocks_overlap_y(v, wg)) return (height + block_y - 1) / block_y;
  // Each group owns all but its block's last computed row; the grid has m computed rows.
  const int k = v.output.ky(), m = (height - k / 2 + k - 1) / k, owned = wg.y * wg.py - 1;
  return std::max(1, (m + owned - 1) / owned);
}

namespace {
// The fused fill's reads of neighbouring computed columns (kperf_tile.cl: KPERF_OUT_READS_PREV_X,
// KPERF_OUT_READS_NEXT_X).
bool reads_prev_x(const Variant& v) {
  const int k = v.output.kx();
  return k > 1 && v.fill().launches == 1 && (v.output_recon == Recon::kLi || k % 2 == 0);
}
bool reads_next_x(const Variant& v) {
  return v.output.kx() > 2 && v.fill().launches == 1 && v.output_recon == Recon::kLi;
}
}  // namespace

int side_items_x(const Variant& v, WorkGroup wg) {
  if (v.output.none() || !v.fill().overlaps_blocks || !v.scheme->frame_free) return 0;
  const int sides = (reads_prev_x(v) ? 1 : 0) + (reads_next_x(v) ? 1 : 0);
  return wg.x > sides ? sides : 0;
}

bool blocks_overlap_x(const Variant& v, WorkGroup wg) { return side_items_x(v, wg) > 0; }

int groups_along_x(const Variant& v, WorkGroup wg, int width) {
  const int block_x = block_of(v, wg).x;
  if (!blocks_overlap_x(v, wg)) return (width + block_x - 1) / block_x;
  const int item_cols = block_x / wg.x, items = (width + item_cols - 1) / item_cols;
  const int owned = wg.x - side_items_x(v, wg);
  return std::max(1, (items + owned - 1) / owned);
}

int block_x0(const Variant& v, WorkGroup wg, int gx) {
  const int block_x = block_of(v, wg).x;
  if (!blocks_overlap_x(v, wg)) return gx * block_x;
  const int item_cols = block_x / wg.x;
  return gx * (block_x - side_items_x(v, wg) * item_cols) - (reads_prev_x(v) ? item_cols : 0);
}

}  // namespace kperf
