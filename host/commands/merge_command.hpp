// `kperf merge OUT IN...`: joins the files of a sharded run (kperf run --shard I/N) into one.
#pragma once

#include <string>

namespace kperf {

// Runs `kperf merge` with argv[0] == "merge"; returns the exit status.
int cmd_merge(int argc, char** argv, const std::string& command_line);

}  // namespace kperf
