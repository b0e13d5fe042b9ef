// `kperf check`: proves apps (a user's .cl file, or built-ins) perforation-safe on one device.
#pragma once

#include <string>

namespace kperf {

// Runs `kperf check` with argv[0] == "check"; 0 when every check passes, 1 when one fails.
int cmd_check(int argc, char** argv);

}  // namespace kperf
