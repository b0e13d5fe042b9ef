// The tuners' sessions: what the contexts of kperf tune's and kperf tune --pipeline's documents
// (and kperf pipeline's) say of what was searched and how, the fingerprint a resumed tune is held
// to, and the rows it resumes.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chain_tune.hpp"
#include "core.hpp"
#include "documents.hpp"
#include "select_walk.hpp"
#include "tune.hpp"

namespace kperf {

// What both commands read: the chain, its stages' spaces, --fuse, the size and the core's
// options.
struct ChainRequest {
  std::string name;
  std::vector<const AppDescriptor*> apps;
  std::vector<StageSpace> spaces;
  std::vector<bool> fuse = {false};  // --fuse none,all: each value a set of chains
  std::vector<int> fuse_rows = {0};  // --fuse-rows: each a set of fused chains (0: tile design)
  // --size; none: a file at its own size, a synthetic input at 512x512 or, for kperf pipeline on a
  // GPU, at the default grid (session/default_size.hpp).
  std::optional<std::pair<int, int>> size;
  nlohmann::ordered_json default_size;  // how kperf pipeline chose its grid (null: --size, inputs)
  CoreOptions opt;
};

// The context's select block: the methods, the ladder, the canary's settings and the method in
// words (`rungs`: what a rung is, "configurations" or "chains").
nlohmann::ordered_json select_context(const SelectOptions& s, double reach, const char* rungs);

// What changes a tune row's measurement: the timing, the build, the inputs and their size (the
// axes and shapes searched, budgets and percentile only change which rows are measured).
nlohmann::ordered_json tune_fingerprint(const ClEnv& env, const TuneConfig& cfg,
                                        const nlohmann::ordered_json& devices);
// The rows of the tune document --resume continues, and what its sessions spent.
std::vector<TuneRow> resumed_tune_rows(const std::string& path,
                                       const nlohmann::ordered_json& fingerprint,
                                       nlohmann::ordered_json& earlier_harness);
// The rows the earlier measuring processes finished before a fault (the faulting ones among
// them), added to those of --resume.
void add_journal_rows(std::vector<TuneRow>& resumed);
// The harness block: the phases, wall time, builds and rows, and what earlier sessions spent.
nlohmann::ordered_json tune_harness(nlohmann::ordered_json phases,
                                    std::chrono::steady_clock::time_point start, std::size_t builds,
                                    std::size_t rows, const nlohmann::ordered_json& earlier);
// The verdicts of a tune's summary that could not be measured (holds: null), with their reasons.
std::vector<std::string> unmeasured_verdicts(const nlohmann::ordered_json& summary);
// The context's "tune" block: what was searched, on which inputs, and how; with --select canary,
// the ladders and the canary too.
nlohmann::ordered_json tune_context(const TuneConfig& cfg, const std::string& train_dir,
                                    const std::string& test_dir,
                                    const nlohmann::ordered_json& devices);

// --fuse's list as the context writes it: "none", "all".
nlohmann::ordered_json fuse_json(const std::vector<bool>& fuse);
// kperf pipeline's context block: the chain, the measurement and the truth, in words.
nlohmann::ordered_json pipeline_block(const ChainRequest& req);
// kperf tune --pipeline's tune_pipeline block: what was searched, how, and how it went.
nlohmann::ordered_json chain_search_context(const ChainRequest& req, const ChainTuneRequest& treq,
                                            const CoreOptions& opt, const std::string& cache,
                                            std::size_t chains, const ChainSearch& search,
                                            const SelectOptions& select);

}  // namespace kperf
