// `kperf run`: benchmark apps x approximations x launch shapes and write JSON results.
#pragma once

#include <string>

namespace kperf {

// Runs `kperf run` with argv[0] == "run"; returns the exit status.
int cmd_run(int argc, char** argv, const std::string& command_line);

}  // namespace kperf
