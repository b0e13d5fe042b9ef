// kperf run's session: the document it writes (checkpoints, annotated rows, the context and the
// harness block) and resumes (its rows, under the same fingerprint), and the share of the
// configurations a sharded run owns.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "documents.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "shard.hpp"

namespace kperf {

// The context block of a run's JSON: what was run, how, and with which device state.
nlohmann::ordered_json run_context(const std::string& command_line, const ClEnv& env,
                                   const RunConfig& cfg, const Runner& runner,
                                   const std::string& binary_cache);
// Keeps the configurations of shard `shard` (and the accurate baselines its speedups need, on
// this device) and describes the partition for the context; returns the units it owns.
std::set<std::string> restrict_to_shard(RunConfig& cfg, const ShardSpec& shard);
// Every option that changes what a row measures; the lists a key names may grow on resume.
nlohmann::ordered_json run_fingerprint(const ClEnv& env, const RunConfig& cfg);
// The rows of the document --resume continues (its fingerprint must be this run's).
std::vector<ResultRow> resumed_rows(const std::string& path,
                                    const nlohmann::ordered_json& fingerprint);

// Writes the run document atomically: the rows so far (resumed ones first), annotated with
// speedups and best shapes, under a context that says how they were measured.
class RunDocument {
 public:
  RunDocument(std::string path, std::string command_line, const ClEnv& env, const RunConfig& cfg,
              const Runner& runner, std::string binary_cache, nlohmann::ordered_json fingerprint,
              std::size_t resumed)
      : path_(std::move(path)),
        command_line_(std::move(command_line)),
        env_(env),
        cfg_(cfg),
        runner_(runner),
        binary_cache_(std::move(binary_cache)),
        fingerprint_(std::move(fingerprint)),
        resumed_(resumed),
        start_(std::chrono::steady_clock::now()) {}

  std::size_t resumed() const { return resumed_; }
  // The document of `rows`, `complete` or not, with the error that ended it (null: none);
  // returns the rows annotated.
  std::vector<ResultRow> write(const std::vector<ResultRow>& rows, bool complete,
                               const nlohmann::ordered_json& error);

 private:
  // Harness overhead: this run's wall time against the kernel time it measured.
  nlohmann::ordered_json harness(const std::vector<ResultRow>& rows) const;

  std::string path_, command_line_;
  const ClEnv& env_;
  const RunConfig& cfg_;
  const Runner& runner_;
  std::string binary_cache_;
  nlohmann::ordered_json fingerprint_;
  std::size_t resumed_;
  std::chrono::steady_clock::time_point start_;
  double write_s_ = 0;  // time spent writing result files
};

}  // namespace kperf
