// The approximation axes as command-line options that `kperf run` and `kperf tune` share: the
// structural axes (input and output schemes, load path, precision, perforation side, launch
// skips) as one table here, then every kernel axis from its own descriptor (kernel_axes.hpp).
#pragma once

#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "schemes.hpp"

namespace kperf {

struct AxisOption {
  const char* flag;          // "load"
  const char* help;          // what the values are
  const char* run_default;   // what kperf run measures unless told
  const char* tune_default;  // what kperf tune searches unless told; nullptr: not searched
  std::string AxesSpec::*field;
};
const std::vector<AxisOption>& axis_options();

// Declares every axis option for `kperf run` (tune = false) or `kperf tune`.
void add_axis_options(cxxopts::Options& options, bool tune);
// The axes as given on the command line, each omitted one at its default.
AxesSpec axes_from(const cxxopts::ParseResult& args, bool tune);

}  // namespace kperf
