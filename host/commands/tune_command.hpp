// `kperf tune`: options, validation and the JSON document of a tuning run (SPEC 12).
#pragma once

#include <string>

namespace kperf {

int cmd_tune(int argc, char** argv, const std::string& command_line);
// `kperf __tune-stage REQUEST`: one device's share of a stage of kperf tune --devices.
int tune_stage_worker_main(int argc, char** argv);

}  // namespace kperf
