// `kperf tune`: options, validation and the JSON document of a tuning run (SPEC 12).
#pragma once

#include <string>

namespace kperf {

int cmd_tune(int argc, char** argv, const std::string& command_line);

}  // namespace kperf
