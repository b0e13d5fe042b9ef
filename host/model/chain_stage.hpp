// A stage of a chain of apps: an app at a variant and launch shape, its output the next stage's
// input. What the measuring core runs (a configuration is a chain of one), what the CPU models of
// chains compute, and what a canary estimates.
#pragma once

#include <vector>

#include "apps.hpp"
#include "schemes.hpp"

namespace kperf {

struct PipelineStage {
  const AppDescriptor* app = nullptr;
  Variant variant;
  WorkGroup wg;
  // The stage runs inside the chain's one fused launch (every stage of a fused chain says so, and
  // each has the launch's shape as its wg).
  bool fused = false;
  // A fused chain's design: 0 the tile design, else the rolling design's strip height in rows
  // (--fuse-rows; every stage of the chain says the same).
  int fuse_rows = 0;
};
using Chain = std::vector<PipelineStage>;

// Whether `chain` is computed in one fused launch.
inline bool is_fused(const Chain& chain) { return !chain.empty() && chain[0].fused; }
// The strip height of a fused chain's rolling design (--fuse-rows), 0 for the tile design or a
// chain of separate launches.
inline int fuse_rows(const Chain& chain) { return is_fused(chain) ? chain[0].fuse_rows : 0; }

}  // namespace kperf
