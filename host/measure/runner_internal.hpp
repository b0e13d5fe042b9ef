// What the runner's files share (runner.cpp: the sweep; runner_config.cpp: one configuration's
// path through the core). Not part of kperf's interface.
#pragma once

#include <string>

#include "bound_input.hpp"
#include "runner.hpp"

namespace kperf {

// One app on one input: the bound input of a chain of one.
struct Runner::Workload : BoundInput {};

}  // namespace kperf
