// kperf tune --pipeline --select canary (SPEC 15): per budget a ladder of the measured chains'
// front, every rung timed with the accurate chain on every held-out input, and per input the
// fastest rung whose canary (the chained CPU models over a sample of the last stage's tiles)
// bounds its final error within the budget.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "chain_tune.hpp"
#include "select_walk.hpp"

namespace kperf {

// The ladder stage (rows of stage "ladder" appended to `rows`, each rung and each static choice
// timed with its final error on every held-out input) and the walks: per budget its select
// block; `canary` gets the estimates and how they track the errors.
std::vector<nlohmann::ordered_json> select_chains(ChainMeasurer& m, TruthSource& truths,
                                                  const ChainLadderInput& in,
                                                  const SelectOptions& s,
                                                  std::vector<ChainRow>& rows,
                                                  nlohmann::ordered_json& canary);

}  // namespace kperf
