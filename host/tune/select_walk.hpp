// The per-input walk of --select canary (SPEC 15), shared by kperf tune and kperf tune
// --pipeline: a ladder's rungs fastest first, each input's canary bounding a rung's error until
// one is within the budget, what the rungs measured on that input, and the verdict and speedups
// over the held-out inputs.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "input_canary.hpp"
#include "tune.hpp"

namespace kperf {

// The ladder rule (SPEC 15) over configurations of (time, training error): of the Pareto front
// (pareto_indices) those `usable` (approximate, and modelled by the canary) within `reach` times
// the budget, the static choice first (when usable, front or not), then those nearest the budget
// on a log scale, at most `k`; returned fastest first, as indices into `points`. The caller
// appends the accurate rung.
std::vector<std::size_t> ladder_rule(const std::vector<FrontPoint>& points,
                                     const std::vector<bool>& usable,
                                     std::optional<std::size_t> static_choice, double budget,
                                     double reach, std::size_t k);

// --select's options: whether per-input canaries choose beside the static choice, the ladder's
// length, the canary's settings.
struct SelectOptions {
  bool canary = false;     // --select lists canary (static is always chosen)
  std::size_t ladder = 4;  // --ladder K: configurations besides the accurate one
  CanarySettings settings;
};

// A rung of a ladder: its name in the document and the stages its canary models.
struct LadderRung {
  std::string label;
  std::vector<CanaryStage> stages;
  bool exact = false;    // the accurate kernel (chain): no canary, always within the budget
  bool faulted = false;  // a device_fault on some held-out input: never picked
};

// What a rung measured on one held-out input.
struct RungMeasure {
  bool barred = false;                // it faulted the device there, or the input's truth is broken
  std::optional<double> error, time;  // none: `problem` says why
  std::string problem;
};
using RungMeasures = std::map<std::string, RungMeasure>;  // by label

// What a select block says of its canary: how it samples and bounds, where it ran, and the
// median share of the outputs its canaries compared.
nlohmann::ordered_json canary_settings_json(const CanarySettings& s, bool device,
                                            const nlohmann::ordered_json& median_fraction);

// The canaries an input gets: its grid, the settings, its seed, the apps' parameters and the
// user apps' evaluators (by stage).
struct CanaryInput {
  std::string name;
  const Grid* grid = nullptr;
  CanarySettings settings;
  AppParams params;
  std::vector<GridEvaluator> evaluators;
  InputCanary make() const {
    return InputCanary(*grid, settings, canary_seed(name), params, evaluators);
  }
};

// Every modelled rung's canary alone on one input, each appended to `estimates` as {rung, input,
// estimate, margin, error, tiles, population, fraction, canary_ns}: how the estimates track the
// errors.
void estimate_rungs(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                    const RungMeasures& here, nlohmann::ordered_json& estimates);
// Over `estimates`: the pairs with an error, those within estimate + margin, the median ratio of
// estimate to error and the median share compared.
nlohmann::ordered_json tracking_json(const nlohmann::ordered_json& estimates);

// One budget's walks over the held-out inputs, input by input.
class LadderWalks {
 public:
  LadderWalks(std::vector<std::string> ladder, double budget, std::string static_label)
      : ladder_(std::move(ladder)), budget_(budget), static_label_(std::move(static_label)) {}
  // A deployment's walk on one input: a fresh canary, the fastest rung first, until one's bound
  // is within the budget (the accurate rung needs none); a faulted or barred rung is never
  // picked, and a NaN estimate (a broken truth) never passes. canary_ns is its wall time.
  void walk(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
            const RungMeasures& here);
  void fail(const std::string& problem) {
    if (problem_.empty()) problem_ = problem;
  }
  // The select block: method, ladder, canary, per_input {rung, estimate, margin, error,
  // kernel_ns, canary_ns, accurate_ns, rungs_tried}, percentile_error, max, holds, and as medians
  // over the inputs of per-input ratios speedup_net (the canary's time counted), speedup_kernel
  // (not counted) and speedup_static (the static choice).
  nlohmann::ordered_json json(const nlohmann::ordered_json& canary, double percentile) const;

 private:
  std::vector<std::string> ladder_;
  double budget_;
  std::string static_label_;
  nlohmann::ordered_json per_input_ = nlohmann::ordered_json::object();
  std::vector<double> errors_, net_, kernel_, fixed_;
  std::string problem_;
};

}  // namespace kperf
