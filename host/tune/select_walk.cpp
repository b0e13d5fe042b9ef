// The per-input walk of --select canary (SPEC 15): the canaries of an input, the rung each budget
// runs there, and the select block over the held-out inputs.
#include "select_walk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "canary_calibration.hpp"
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

// The device canary's estimate of a rung on this input, if it took the rung.
const CanaryEstimate* device_estimate(const DeviceEstimates* device, const std::string& label) {
  if (!device) return nullptr;
  const auto found = device->by_label.find(label);
  return found == device->by_label.end() ? nullptr : &found->second;
}

// The margin the walks use: the canary's, calibrated where the input says so.
double scaled_margin(const CanaryInput& in, double raw) {
  return in.margin_scale ? calibrated_margin(raw, *in.margin_scale) : raw;
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

namespace {

// Where the canaries of `ladder`'s rungs ran: "device", "host", or per rung where they differ;
// and why any ran on the host.
void where_json(const CanaryPlacement& p, const std::vector<std::string>& ladder, Json& block) {
  Json host_rungs = Json::array(), per_rung = Json::object();
  for (const std::string& label : ladder) {  // the accurate rung, in neither, needs no canary
    const auto found = p.host_rungs.find(label);
    if (found != p.host_rungs.end()) {
      host_rungs.push_back({{"rung", label}, {"reason", found->second}});
      per_rung[label] = "host";
    } else if (p.device_rungs.count(label)) {
      per_rung[label] = "device";
    }
  }
  if (!p.device) {
    block["where"] = "host";
    block["reason"] = p.reason;
  } else if (host_rungs.empty()) {
    block["where"] = "device";
  } else {
    block["where"] = per_rung;
    block["host_rungs"] = host_rungs;
  }
  if (!p.device_problem.empty()) block["device_problem"] = p.device_problem;
  if (p.test_scale != 1) block["test_scale"] = p.test_scale;
}

}  // namespace

Json canary_settings_json(const CanarySettings& s, const CanaryPlacement& where,
                          const std::vector<std::string>& ladder, const Json& median_fraction) {
  Json block = {
      {"samples",
       "whole work-group tiles of the rung's launch, each filled and rebuilt at full resolution "
       "as its kernel does, one tile drawn at random in each cell of a lattice over the grid "
       "(stratified); in each, one slot of at most 16 x 8 outputs of the block drawn at random "
       "is computed by the rung and the accurate one (CPU models on the host, the kernels on the "
       "device; the same places for every rung of the same tiling)"},
      {"fraction", median_fraction},
      {"requested_fraction", s.fraction},
      {"min_tiles", s.min_tiles},
      {"confidence", s.confidence},
      {"margin",
       "one-sided upper confidence bound on the whole input's error: the ratio estimator of the "
       "metric over the sampled windows plus Student's t quantile times its standard error (a "
       "simple random sample without replacement); ME over the sampled truth's range"}};
  where_json(where, ladder, block);
  block["runs"] =
      where.device
          ? "device: one call per held-out input for every rung of the app's ladders that it "
            "takes (every budget's), the rungs and the accurate kernel launched over the sampled "
            "groups alone, the windows' error sums reduced on the device, one blocking readback, "
            "the estimator on the host; the call made twice, the first untimed (programs built, "
            "the input uploaded in the rungs' layouts, as a deployment holds them before its "
            "canary), the cache flushed between them under cold timing, the second timed and its "
            "estimates used. Rungs in host_rungs: the host canary (CPU models) in the walk"
      : where.user_truth_kernel
          ? "host threads (CPU models), and the device for the user app's truth kernel on the "
            "sampled tiles"
          : "host threads (CPU models), no device time";
  block["threads"] = host_threads();
  block["canary_ns"] =
      "per input canary_device_ns + canary_host_ns. Device: canary_device_ns the call's launches "
      "from the first one's start to the last one's end (profiling events), canary_host_ns the "
      "host's time outside that interval: the call's wall time (enqueue, blocking readback, "
      "estimator) less canary_device_ns (0 where the clocks put it below), plus the walk's own "
      "wall time (its decision, and host canaries of rungs in host_rungs); the call serves every "
      "budget and each budget counts it whole. Host: canary_device_ns 0, canary_host_ns the wall "
      "time of the walk down the ladder, fastest rung first, until one is within the budget (the "
      "accurate rung needs no canary)";
  return block;
}

void estimate_rungs(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                    const RungMeasures& here, Json& estimates, const DeviceEstimates* device) {
  for (const auto& [label, r] : rungs) {
    const auto found = here.find(label);
    if (r.exact || r.faulted || (found != here.end() && found->second.barred)) continue;
    const auto start = std::chrono::steady_clock::now();
    InputCanary canary = in.make();
    const CanaryEstimate host = canary.estimate(r.stages);
    const double ns = elapsed_ns(start);
    const double error = found != here.end() && found->second.error
                             ? *found->second.error
                             : std::numeric_limits<double>::quiet_NaN();
    const CanaryEstimate* on_device = device_estimate(device, label);
    const bool dev = on_device != nullptr;
    const CanaryEstimate& e = dev ? *on_device : host;
    Json entry = {{"rung", label},
                  {"input", in.name},
                  {"where", dev ? "device" : "host"},
                  {"estimate", number_or_null(e.estimate)},
                  {"margin", number_or_null(scaled_margin(in, e.margin))}};
    if (in.margin_scale) entry["raw_margin"] = number_or_null(e.margin);
    entry["error"] = number_or_null(error);
    entry["tiles"] = e.tiles;
    entry["population"] = e.population;
    entry["fraction"] = e.fraction;
    if (dev) {
      entry["host_estimate"] = number_or_null(host.estimate);
      entry["host_margin"] = number_or_null(host.margin);
      entry["host_canary_ns"] = ns;
    } else {
      entry["canary_ns"] = ns;
    }
    estimates.push_back(entry);
  }
}

bool within_device_tolerance(double device, double host) {
  if (std::isnan(device) || std::isnan(host)) return std::isnan(device) && std::isnan(host);
  if (std::isinf(device) || std::isinf(host)) return device == host;
  return std::fabs(device - host) <= 1e-7 + 1e-5 * std::fabs(host);
}

namespace {

// How the device canary's estimates compare with the host canary's on the same tiles: the pairs,
// those within the tolerance (estimate and margin both), and the largest difference over it.
Json device_vs_host(const Json& estimates) {
  std::size_t pairs = 0, within = 0;
  double worst = 0;
  // JSON has no NaN or infinity: null on both sides is a match (both not finite).
  auto value = [](const Json& j) {
    return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
  };
  for (const Json& e : estimates) {
    if (e["where"] != "device") continue;
    ++pairs;
    bool ok = true;
    // A calibrated margin is compared as the canary made it: host_margin is the raw one.
    const char* margin = e.contains("raw_margin") ? "raw_margin" : "margin";
    for (const auto& [d, h] : {std::pair<const char*, const char*>{"estimate", "host_estimate"},
                               {margin, "host_margin"}}) {
      const double dv = value(e[d]), hv = value(e[h]);
      ok = ok && within_device_tolerance(dv, hv);
      if (std::isfinite(dv) && std::isfinite(hv))
        worst = std::max(worst, std::fabs(dv - hv) / (1e-7 + 1e-5 * std::fabs(hv)));
    }
    within += ok;
  }
  return {{"pairs", pairs},
          {"within_tolerance", within},
          {"tolerance", "1e-7 + 1e-5 x |host|, on the estimate and on the margin"},
          {"max_difference_over_tolerance", worst}};
}

}  // namespace

Json tracking_json(const Json& estimates) {
  std::size_t pairs = 0, covered = 0, raw_pairs = 0, raw_covered = 0;
  std::vector<double> ratios, fractions;
  bool device = false;
  for (const Json& e : estimates) {
    fractions.push_back(e["fraction"].get<double>());
    device = device || e["where"] == "device";
    if (!e["error"].is_number() || !e["estimate"].is_number() || !e["margin"].is_number()) continue;
    const double error = e["error"], estimate = e["estimate"], margin = e["margin"];
    ++pairs;
    covered += error <= estimate + margin;
    if (e.contains("raw_margin") && e["raw_margin"].is_number())
      ++raw_pairs, raw_covered += error <= estimate + e["raw_margin"].get<double>();
    if (error > 0) ratios.push_back(estimate / error);
  }
  Json tracking = {{"pairs", pairs},
                   {"covered", covered},  // true error within estimate + margin
                   {"coverage", number_or_null(pairs ? static_cast<double>(covered) / pairs : NAN)},
                   {"median_estimate_over_error", number_or_null(median(ratios))},
                   {"median_fraction", number_or_null(median(fractions))}};
  if (raw_pairs)  // calibrated margins: the coverage the canary's own would have had
    tracking["coverage_raw"] = static_cast<double>(raw_covered) / static_cast<double>(raw_pairs);
  if (device) tracking["device_vs_host"] = device_vs_host(estimates);
  return tracking;
}

void LadderWalks::walk(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                       const RungMeasures& here, const DeviceEstimates* device) {
  InputCanary canary = in.make();
  const auto start = std::chrono::steady_clock::now();
  const LadderRung* ran = nullptr;
  std::optional<CanaryEstimate> estimate;
  double raw_margin = 0;  // the canary's own margin of the rung that ran
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
    const CanaryEstimate* on_device = device_estimate(device, label);
    CanaryEstimate e = on_device ? *on_device : canary.estimate(r.stages);
    raw_margin = e.margin;
    e.margin = scaled_margin(in, e.margin);
    if (e.upper() <= budget_) {
      ran = &r, estimate = e;
      break;
    }
  }
  const double walk_ns = elapsed_ns(start);
  // The call's wall time holds its device interval (the readback blocks until the last launch
  // ends), so what the host adds is the rest of it, then the walk.
  const double device_ns = device ? device->device_ns : 0;
  const double host_ns =
      (device ? std::max(0.0, device->wall_ns - device->device_ns) : 0) + walk_ns;
  const double canary_ns = device_ns + host_ns;
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
                         {"raw_margin", estimate ? number_or_null(raw_margin) : Json(0.0)},
                         {"error", *on->error},
                         {"kernel_ns", *on->time},
                         {"canary_ns", canary_ns},
                         {"canary_device_ns", device_ns},
                         {"canary_host_ns", host_ns},
                         {"accurate_ns", *accurate->time},
                         {"rungs_tried", tried}};
  if (!in.margin_scale) per_input_[in.name].erase("raw_margin");
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
