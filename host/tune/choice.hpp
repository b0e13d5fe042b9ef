// The tuner's judgements, the same for configurations (kperf tune) and chains (kperf tune
// --pipeline): a budget's finalists, the stable rule that chooses among them, the held-out
// verdict of a choice, and the budgets a broken training truth leaves unmeasured.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tune.hpp"

namespace kperf {

// A budget's finalists among `points` (time, training error): those within the budget whose time
// lies within TuneConfig::kFinalistBand of the fastest of them, at most TuneConfig::kMaxFinalists,
// fastest first (equal times in their order in `points`); indices into `points`.
std::vector<std::size_t> finalist_indices(const std::vector<FrontPoint>& points, double budget);

// A choice's error on one held-out input.
struct HeldOutError {
  std::string input;
  double error = 0;
  std::string key, output_file;  // the row that measured it, and its saved output if any
};

// The held-out test of a choice within `budget`, into `choice`: "test" ({errors: per input
// {error, output_file, key}, mean, percentile_error, max}), "holds" (the percentile error within
// the budget), "max_within_budget" and "verdict" in words (`exact`: the choice is the accurate
// kernel or chain). Where `problem` says why some held-out input was not measured, the test is
// {problem}, holds null and the verdict "unmeasured: PROBLEM": nothing says whether it holds.
void add_held_out_verdict(nlohmann::ordered_json& choice, const std::vector<HeldOutError>& errors,
                          const std::string& problem, double budget, double percentile, bool exact);

// A training input whose truth is broken (SPEC 15) leaves nothing to choose and no verdict: the
// choice's "holds" null and its "verdict" "unmeasured: reference_failed on INPUT: REASON".
void add_broken_truth_verdict(nlohmann::ordered_json& choice, const std::string& input,
                              const std::string& reason);

}  // namespace kperf
