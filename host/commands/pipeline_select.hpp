// kperf tune --pipeline --select canary (SPEC 15): per budget a ladder of the measured chains'
// front, every rung timed with the accurate chain on every held-out input, and per input the
// fastest rung whose canary (the chained CPU models over a sample of the last stage's tiles)
// bounds its final error within the budget.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "pipeline_command.hpp"
#include "select_options.hpp"
#include "tune.hpp"

namespace kperf {

// What the chain tuner found that the ladders are made of.
struct ChainLadderInput {
  const std::vector<std::vector<PipelineStage>>* chains = nullptr;
  std::vector<std::size_t> measured;  // the measured chains, indices into `chains`
  std::vector<FrontPoint> points;     // their screen times and training errors
  // Per budget, the static choice (an index into `measured`), none where nothing was chosen.
  std::vector<std::optional<std::size_t>> chosen;
  std::optional<std::size_t> accurate;  // the accurate chain, an index into `chains`
  std::vector<double> budgets;
  double percentile = 95;
  std::vector<ImageSource> test;
  std::pair<int, int> size;
};

// The ladder stage (rows of stage "ladder" appended to `rows`, each rung and each static choice
// timed with its final error on every held-out input) and the walks: per budget its select
// block; `canary` gets the estimates and how they track the errors.
std::vector<nlohmann::ordered_json> select_chains(ChainMeasurer& m, ChainTruth& truth,
                                                  const ChainLadderInput& in,
                                                  const SelectOptions& s,
                                                  nlohmann::ordered_json& rows,
                                                  nlohmann::ordered_json& canary);

// A chain's label in select blocks: its stages' labels joined by " > ".
std::string chain_label(const std::vector<PipelineStage>& chain);

}  // namespace kperf
