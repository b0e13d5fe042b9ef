// kperf pipeline: chains of image apps, each stage at its own approximation (docs/pipelines.md).
#pragma once

#include <string>

namespace kperf {

int cmd_pipeline(int argc, char** argv, const std::string& command_line);

}  // namespace kperf
