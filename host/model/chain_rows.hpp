// A chain's row in kperf pipeline and kperf tune --pipeline documents (docs/json.md): one chain
// of stages on one input, typed as a run row is, and its JSON both ways.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "stats.hpp"
#include "status.hpp"

namespace kperf {

// kperf pipeline's documents; 2 since every reference of a built-in reads "cpu-double" (as a run
// row's) and a build's warnings may fill a stage's build_log.
constexpr int kPipelineSchemaVersion = 2;
// kperf tune --pipeline's; 3 since the held-out test of a choice is a tune's (errors per input,
// mean, max_within_budget, the verdict's words).
constexpr int kPipelineTuneSchemaVersion = 3;

struct StageRow {
  std::string app, variant, family, wg, precision, metric, reference;
  std::optional<TimingStats> time;  // its launches per chain run (none in a fused chain)
  std::optional<double> error;      // the primary metric against the chained truth (NaN: null)
  std::optional<ErrorMetrics> errors;
  std::string build_log, output_file;
};

struct ChainRow {
  std::string key, pipeline, input_name;
  int width = 0, height = 0;
  Status status = Status::kOk;
  std::string reason;
  bool fused = false, exact = false;
  int fuse_rows = 0;  // a fused chain's rolling design: its strip height (0: the tile design)
  // A tune's stage ("screen", "measure", "rank", "test", "ladder"; "" in kperf pipeline) and the
  // rank stage's round.
  std::string stage;
  std::optional<int> round;
  std::vector<StageRow> stages;
  std::vector<std::string> intermediate;  // the stored type between each pair of stages
  std::optional<TimingStats> time;
  std::vector<std::uint64_t> samples_ns;  // every run's time, every stage summed
  std::optional<double> final_error;      // the last stage's error (NaN: null)
  std::optional<double> accurate_time_ns, speedup;
  std::string output_file;
  bool ok() const { return status == Status::kOk; }
  // Measured without a time and an error to rank by: a failure's row, or a timing-only run.
  bool has_time() const { return time.has_value(); }
};

nlohmann::ordered_json to_json(const ChainRow& row);
ChainRow chain_row_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace kperf
