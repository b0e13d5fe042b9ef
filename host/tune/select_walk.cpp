// The per-input walk of --select canary (SPEC 15): the canaries of an input, the rung each budget
// runs there, and the select block over the held-out inputs.
#include "select_walk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "parallel.hpp"
#include "tune.hpp"

namespace kperf {

namespace {

using Json = nlohmann::ordered_json;

double elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - since).count();
}

double median(std::vector<double> values) {
  return values.empty() ? std::numeric_limits<double>::quiet_NaN() : percentile(values, 50);
}

}  // namespace

std::vector<std::size_t> ladder_rule(const std::vector<FrontPoint>& points,
                                     const std::vector<bool>& usable,
                                     std::optional<std::size_t> static_choice, double budget,
                                     double reach, std::size_t k) {
  std::vector<std::size_t> candidates;
  for (std::size_t i : pareto_indices(points))
    if (usable[i] && points[i].error <= reach * budget) candidates.push_back(i);
  auto distance = [&](std::size_t i) {
    return points[i].error > 0 ? std::fabs(std::log(points[i].error / budget))
                               : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](std::size_t a, std::size_t b) { return distance(a) < distance(b); });
  std::vector<std::size_t> rungs;
  auto add = [&](std::size_t i) {
    if (rungs.size() < k && std::find(rungs.begin(), rungs.end(), i) == rungs.end())
      rungs.push_back(i);
  };
  if (static_choice && usable[*static_choice]) add(*static_choice);
  for (std::size_t i : candidates) add(i);
  std::stable_sort(rungs.begin(), rungs.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].time < points[b].time; });
  return rungs;
}

Json canary_settings_json(const CanarySettings& s, bool device, const Json& median_fraction) {
  return {
      {"samples",
       "whole work-group tiles of the rung's launch, each filled and rebuilt at full resolution "
       "as its kernel does, one tile drawn at random in each cell of a lattice over the grid "
       "(stratified); in each, one slot of at most 16 x 8 outputs of the block drawn at random "
       "is computed by the rung's CPU model and the accurate model (the same places for every "
       "rung of the same tiling)"},
      {"fraction", median_fraction},
      {"requested_fraction", s.fraction},
      {"min_tiles", s.min_tiles},
      {"confidence", s.confidence},
      {"margin",
       "one-sided upper confidence bound on the whole input's error: the ratio estimator of the "
       "metric over the sampled windows plus Student's t quantile times its standard error (a "
       "simple random sample without replacement); ME over the sampled truth's range"},
      {"where", device ? "host threads, and the device for user apps' truth kernels on the "
                         "sampled tiles"
                       : "host threads (CPU models), no device time"},
      {"threads", host_threads()},
      {"canary_ns",
       "wall time of the walk down the ladder on one input, fastest rung first, until one is "
       "within the budget (the accurate rung needs no canary)"}};
}

void estimate_rungs(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                    const RungMeasures& here, Json& estimates) {
  for (const auto& [label, r] : rungs) {
    const auto found = here.find(label);
    if (r.exact || r.faulted || (found != here.end() && found->second.barred)) continue;
    const auto start = std::chrono::steady_clock::now();
    InputCanary canary = in.make();
    const CanaryEstimate e = canary.estimate(r.stages);
    const double ns = elapsed_ns(start);
    const double error = found != here.end() && found->second.error
                             ? *found->second.error
                             : std::numeric_limits<double>::quiet_NaN();
    estimates.push_back({{"rung", label},
                         {"input", in.name},
                         {"estimate", number_or_null(e.estimate)},
                         {"margin", number_or_null(e.margin)},
                         {"error", number_or_null(error)},
                         {"tiles", e.tiles},
                         {"population", e.population},
                         {"fraction", e.fraction},
                         {"canary_ns", ns}});
  }
}

Json tracking_json(const Json& estimates) {
  std::size_t pairs = 0, covered = 0;
  std::vector<double> ratios, fractions;
  for (const Json& e : estimates) {
    fractions.push_back(e["fraction"].get<double>());
    if (!e["error"].is_number() || !e["estimate"].is_number() || !e["margin"].is_number()) continue;
    const double error = e["error"], estimate = e["estimate"], margin = e["margin"];
    ++pairs;
    covered += error <= estimate + margin;
    if (error > 0) ratios.push_back(estimate / error);
  }
  return {{"pairs", pairs},
          {"covered", covered},  // true error within estimate + margin
          {"coverage", number_or_null(pairs ? static_cast<double>(covered) / pairs : NAN)},
          {"median_estimate_over_error", number_or_null(median(ratios))},
          {"median_fraction", number_or_null(median(fractions))}};
}

void LadderWalks::walk(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                       const RungMeasures& here) {
  InputCanary canary = in.make();
  const auto start = std::chrono::steady_clock::now();
  const LadderRung* ran = nullptr;
  std::optional<CanaryEstimate> estimate;
  int tried = 0;
  for (const std::string& label : ladder_) {
    const LadderRung& r = rungs.at(label);
    const auto m = here.find(label);
    if (r.faulted || (m != here.end() && m->second.barred)) continue;
    if (r.exact) {
      ran = &r;
      break;
    }
    ++tried;
    const CanaryEstimate e = canary.estimate(r.stages);
    if (e.upper() <= budget_) {
      ran = &r, estimate = e;
      break;
    }
  }
  const double canary_ns = elapsed_ns(start);
  if (!ran) {
    std::string why = "every rung faulted";
    for (const auto& [label, m] : here)
      if (const auto r = rungs.find(label); r != rungs.end() && r->second.exact && m.barred)
        why = m.problem;
    per_input_[in.name] = {{"rung", nullptr}, {"problem", why}};
    fail("no rung can run on " + in.name + " (" + why + ")");
    return;
  }
  const RungMeasure* on = here.count(ran->label) ? &here.at(ran->label) : nullptr;
  const RungMeasure* accurate = nullptr;
  for (const auto& [label, r] : rungs)
    if (r.exact && here.count(label)) accurate = &here.at(label);
  if (!on || !on->error || !on->time || !accurate || !accurate->time) {
    const std::string why = on && !on->problem.empty() ? on->problem
                                                       : "no time of " + ran->label +
                                                             " or the accurate rung on " + in.name;
    per_input_[in.name] = {{"rung", ran->label}, {"problem", why}};
    fail(why);
    return;
  }
  errors_.push_back(*on->error);
  net_.push_back(*accurate->time / (*on->time + canary_ns));
  kernel_.push_back(*accurate->time / *on->time);
  const auto fixed = here.find(static_label_);
  if (fixed != here.end() && fixed->second.time)
    fixed_.push_back(*accurate->time / *fixed->second.time);
  per_input_[in.name] = {{"rung", ran->label},
                         {"estimate", estimate ? number_or_null(estimate->estimate) : Json(0.0)},
                         {"margin", estimate ? number_or_null(estimate->margin) : Json(0.0)},
                         {"error", *on->error},
                         {"kernel_ns", *on->time},
                         {"canary_ns", canary_ns},
                         {"accurate_ns", *accurate->time},
                         {"rungs_tried", tried}};
}

Json LadderWalks::json(const Json& canary, double percentile_p) const {
  Json select = {{"method", "canary"}, {"ladder", ladder_}, {"canary", canary}};
  select["per_input"] = per_input_;
  if (!problem_.empty() || errors_.empty()) {
    select["percentile_error"] = nullptr;
    select["holds"] = nullptr;
    select["problem"] = problem_.empty() ? "no held-out input" : problem_;
    return select;
  }
  const double p = percentile(errors_, percentile_p);
  select["percentile_error"] = p;
  select["max"] = *std::max_element(errors_.begin(), errors_.end());
  select["holds"] = p <= budget_;
  select["speedup_net"] = number_or_null(median(net_));
  select["speedup_kernel"] = number_or_null(median(kernel_));  // the canary free
  select["speedup_static"] = number_or_null(median(fixed_));   // the static choice
  return select;
}

}  // namespace kperf
