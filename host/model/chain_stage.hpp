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
};
using Chain = std::vector<PipelineStage>;

// Whether `chain` is computed in one fused launch.
inline bool is_fused(const Chain& chain) { return !chain.empty() && chain[0].fused; }

}  // namespace kperf
