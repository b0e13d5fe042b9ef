// `kperf tune`: options, validation and the JSON document of a tuning run (SPEC 12).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "inputs.hpp"

namespace kperf {

int cmd_tune(int argc, char** argv, const std::string& command_line);
// --budget's list: fractions in (0, 1], sorted and distinct; else a UsageError.
std::vector<double> parse_budgets(const std::string& text);
// The images of a --train or --test directory, checked: a directory, decodable files, distinct
// names; `sizes` gets each one's size as loaded.
std::vector<ImageSource> read_input_dir(const std::string& option, const std::string& dir,
                                        std::vector<std::pair<int, int>>& sizes);
// `kperf __tune-stage REQUEST`: one device's share of a stage of kperf tune --devices.
int tune_stage_worker_main(int argc, char** argv);

}  // namespace kperf
