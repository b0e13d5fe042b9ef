// kperf merge's work: the shards of one run (kperf run --shard I/N) read, checked to be one
// run's, and joined into one run document with its derived fields recomputed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results.hpp"

namespace kperf {

struct MergedRun {
  nlohmann::ordered_json doc;      // the merged run document
  std::vector<ResultRow> results;  // its results, annotated (the shards' baseline copies apart)
  std::size_t shards = 0, devices = 0;
};

// Reads the shard files and checks them as one run's (a UsageError names the first problem:
// unreadable, not a shard, incomplete, another fingerprint or partition, a shard twice or
// missing, a configuration twice); then the merged document.
MergedRun merge_shards(const std::vector<std::string>& paths, const std::string& command_line);

}  // namespace kperf
