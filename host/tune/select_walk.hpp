// The per-input walk of --select canary (SPEC 15), shared by kperf tune and kperf tune
// --pipeline: a ladder's rungs fastest first, each input's canary bounding a rung's error until
// one is within the budget, what the rungs measured on that input, and the verdict and speedups
// over the held-out inputs.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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
// length, the canary's settings and where it runs.
struct SelectOptions {
  bool canary = false;     // --select lists canary (static is always chosen)
  std::size_t ladder = 4;  // --ladder K: configurations besides the accurate one
  CanarySettings settings;
  // --canary-on: auto (the device canary on a GPU that can run it, else the host's), device (the
  // device canary wherever it can run) or host (the CPU models alone).
  std::string canary_on = "auto";
  // --canary-calibrate on|off: kperf tune's alone (the chain tuner keeps the canary's margins).
  bool calibrate = true;
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

// Where a select block's canaries ran: the device canary (one call per held-out input for every
// rung it takes) with the host canary for the rungs it cannot take, or the host canary for all.
struct CanaryPlacement {
  bool device = false;
  std::string reason;  // why the host canary ran every rung (device false)
  std::map<std::string, std::string> host_rungs;  // on the device path: rungs left to the host, why
  std::set<std::string> device_rungs;             // and those the device canary takes
  std::string device_problem;                     // a device canary call that failed, and after it
  bool user_truth_kernel = false;  // the host canary runs a user app's truth kernel on the device
  double test_scale = 1;           // KPERF_TEST_DEVICE_CANARY_SCALE (a test's known-bad estimates)
};

// What a select block says of its canary: how it samples and bounds, where it ran for the rungs of
// `ladder` ("device", "host", or per rung), and the median share of the outputs it compared.
nlohmann::ordered_json canary_settings_json(const CanarySettings& s, const CanaryPlacement& where,
                                            const std::vector<std::string>& ladder,
                                            const nlohmann::ordered_json& median_fraction);

// The device canary's estimates on one input: the rungs it took, by label, from one call, and
// what that call cost.
struct DeviceEstimates {
  std::map<std::string, CanaryEstimate> by_label;
  double device_ns = 0;  // its launches' device interval, first start to last end
  double busy_ns = 0;    // their own durations summed
  double wall_ns = 0;    // the host's wall time of the call: enqueue, blocking readback, estimator
  int launches = 0;
};

// The canaries an input gets: its grid, the settings, its seed, the apps' parameters and the
// user apps' evaluators (by stage).
struct CanaryInput {
  std::string name;
  const Grid* grid = nullptr;
  CanarySettings settings;
  AppParams params;
  std::vector<GridEvaluator> evaluators;
  // kperf tune --canary-calibrate: every margin the walks and estimates use is the canary's times
  // this (calibrated_margin), the canary's own kept beside it as raw_margin; none: the canary's.
  std::optional<double> margin_scale;
  InputCanary make() const {
    return InputCanary(*grid, settings, canary_seed(name), params, evaluators);
  }
};

// Every modelled rung's canary alone on one input, each appended to `estimates` as {rung, input,
// where, estimate, margin, [raw_margin,] error, tiles, population, fraction, canary_ns}: how the
// estimates track the errors (raw_margin where in.margin_scale calibrates the margin). A rung
// `device` estimated is listed with the device's estimate, and beside it the host canary's
// (host_estimate, host_margin, host_canary_ns): the model it is held to (its margin the raw one,
// compared with raw_margin).
void estimate_rungs(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                    const RungMeasures& here, nlohmann::ordered_json& estimates,
                    const DeviceEstimates* device = nullptr);
// Over `estimates`: the pairs with an error, those within estimate + margin, the median ratio of
// estimate to error and the median share compared; where the device estimated, how its estimates
// compare with the host canary's (device_vs_host).
nlohmann::ordered_json tracking_json(const nlohmann::ordered_json& estimates);
// The device canary's tolerance against the host canary (tests/device_canary_tests.cpp): the two
// differ by float roundings, at most 1.3e-6 of the value over every app and rung family there.
bool within_device_tolerance(double device, double host);

// One budget's walks over the held-out inputs, input by input.
class LadderWalks {
 public:
  LadderWalks(std::vector<std::string> ladder, double budget, std::string static_label)
      : ladder_(std::move(ladder)), budget_(budget), static_label_(std::move(static_label)) {}
  // A deployment's walk on one input: the fastest rung first, until one's bound is within the
  // budget (the accurate rung needs none); a faulted or barred rung is never picked, and a NaN
  // estimate (a broken truth) never passes. A rung `device` estimated reads its estimate there,
  // any other gets a fresh host canary. canary_ns = canary_device_ns + canary_host_ns: the device
  // call's interval, and the host's time outside it (the call's wall time beyond the interval and
  // the walk's own, host canaries included); on the host path the walk's wall time alone.
  void walk(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
            const RungMeasures& here, const DeviceEstimates* device = nullptr);
  void fail(const std::string& problem) {
    if (problem_.empty()) problem_ = problem;
  }
  const std::vector<std::string>& ladder() const { return ladder_; }
  // The select block: method, ladder, canary, per_input {rung, estimate, margin, [raw_margin,]
  // error, kernel_ns, canary_ns, canary_device_ns, canary_host_ns, accurate_ns, rungs_tried},
  // percentile_error, max, holds, and as medians over the inputs of per-input ratios speedup_net
  // (canary_ns counted), speedup_kernel (not counted) and speedup_static (the static choice).
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
