// The rolling design of a fused chain (schemes/fuse_roll.cl, docs/pipelines.md): every work-group
// streams a column strip down, a rolling window of rows per stage. Its geometry, as the kernel
// lays it out: the block a group owns, the groups of a launch, its local memory, the input
// elements it reads.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "chain_stage.hpp"

namespace kperf {

// What a rolling launch is made of: the strip height, the halo of the first stage's input (every
// stage's radius) and of its outputs (the later stages' radii), the first stage's radius, and the
// rows past a skipped input row to its kept rows (rows:k: k - 1).
struct RollingShape {
  int rows = 0, halo = 0, halo_after_first = 0, first_radius = 0, reach = 0;
  WorkGroup launch;
  int columns() const { return launch.x * launch.vec; }  // columns every stage computes a row
  // The last stage's columns a group stores: a multiple of 4 and of vec that leaves the first
  // stage's output halo beside it within columns(); 0 where none does.
  int block_x() const;
  // The input ring's row: from the aligned column block_x0 - roundup4(halo), and its floats.
  int input_lead() const { return (4 - halo % 4) % 4; }
  int input_width() const;
};
RollingShape rolling_shape(const Chain& chain);

// The launch's work-groups along x and y.
std::pair<int, int> rolling_groups(const Chain& chain, int width, int height);
// The local memory of one work-group: the input ring and every earlier stage's ring, per row of
// work-items.
std::size_t rolling_local_bytes(const Chain& chain);
// Which input elements (row-major, width x height) a rolling launch reads: per strip, its kept
// input rows with the halo of every stage and the rows rebuilding the first and last, clamped;
// per group, its input row's columns, clamped.
std::vector<char> rolling_elements_read(const Chain& chain, int width, int height);

}  // namespace kperf
