// Split-conformal calibration of the canary's margin (kperf tune --select canary): the canary's
// bound held less often than its confidence on an H200 (skewed per-window errors), so each app's
// margins are scaled by a quantile of how far the true errors on the training inputs lay beyond
// the estimates, in margins.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kperf {

// The split-conformal rule over n scores s = (error - estimate) / margin: k = the
// ceil((n + 1) x confidence)-th smallest (1-based), +infinity when that index exceeds n (too few
// pairs to say anything at that confidence), and scale = max(1, k), so a calibrated margin is
// never narrower than the canary's own.
struct ConformalScale {
  std::size_t n = 0;
  std::size_t index = 0;  // ceil((n + 1) x confidence), 1-based
  double score = 0;       // the index-th smallest score, or +infinity
  double scale = 1;       // max(1, score)
};
ConformalScale conformal_scale(std::vector<double> scores, double confidence);

// A margin under a scale: raw x scale. A margin of 0 stays 0 whatever the scale (the canary sampled
// every window, so its estimate is the error and nothing is left to calibrate); NaN stays NaN.
double calibrated_margin(double raw, double scale);

// One app's calibration: its pairs of (rung, training input) with the canary's estimate, raw
// margin and the rung's true error there, the pairs skipped and why.
class CanaryCalibration {
 public:
  struct Pair {
    std::string rung, input, where;
    double estimate = 0, margin = 0, error = 0;
  };
  // A pair is used when its numbers are finite and its margin positive; otherwise counted as
  // skipped with the reason.
  void add(Pair p);
  void skip(const std::string& reason) { ++skipped_[reason]; }
  ConformalScale result(double confidence) const;
  // {method, inputs, pairs, skipped, skipped_reasons, confidence, quantile_index,
  // score_at_quantile (null when infinite), scale (null when infinite), refused (then: why),
  // training_coverage, training_coverage_raw, estimates: every pair used with its score}.
  nlohmann::ordered_json json(const std::vector<std::string>& inputs, double confidence) const;

 private:
  std::vector<Pair> pairs_;
  std::map<std::string, std::size_t> skipped_;
};

}  // namespace kperf
