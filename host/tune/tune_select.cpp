// kperf tune --select canary (SPEC 15): per budget a ladder of the front's configurations, each
// timed with the accurate kernel on every held-out input, and per input the fastest rung whose
// canary (the CPU model of a sample of its tiles beside the accurate model there) bounds its
// error within the budget; the choices it makes, their true errors and what the canary cost.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "app_truth.hpp"
#include "inputs.hpp"
#include "parallel.hpp"
#include "tune_internal.hpp"

namespace kperf {

using namespace tune_detail;

namespace {

using Json = nlohmann::ordered_json;

// A rung as the canary walks it: its name in the document, what it runs, and its rows.
struct Rung {
  std::string label;  // VARIANT@SHAPE
  Variant v;
  WorkGroup wg;
  bool exact = false;
  bool faulted = false;  // a device_fault row on some held-out input: never picked
};

// What one held-out input's canary found for one rung, and what the rung measured there.
struct RungOnInput {
  std::optional<CanaryEstimate> canary;  // none for the accurate kernel
  double canary_ns = 0;                  // this rung's canary alone, the accurate tiles included
  const ResultRow *row = nullptr;        // its ladder row on the input
  std::optional<double> time;            // the row's objective median
  std::string problem;                   // why the rung has no error or time there
  // It faulted the device there, or the input's truth is broken: never picked there.
  bool barred() const { return row && (row->device_faulted() || row->reference_failed()); }
};

double elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - since).count();
}

double median(std::vector<double> values) {
  return values.empty() ? std::numeric_limits<double>::quiet_NaN() : percentile(values, 50);
}

}  // namespace

// The front's points within kLadderReach of the budget (the accurate kernel and what the canary
// cannot model aside), the static choice first, then those nearest the budget on a log scale, at
// most --ladder of them, fastest first; the accurate kernel at its best shape last.
std::vector<Tuner::Point> Tuner::ladder_of(const AppDescriptor &app,
                                           const std::vector<Point> &points,
                                           const Choice &choice) const {
  const auto &m = states_.at(app.name);
  auto usable = [&](const Point &p) {
    const Variant &v = m.at(p.id).v;
    return !is_exact(v) && !canary_problem({&app, v, p.wg});
  };
  std::vector<FrontPoint> fp;
  for (const auto &p : points) fp.push_back({p.time, p.error});
  std::vector<const Point *> candidates;
  for (std::size_t i : pareto_indices(fp))
    if (usable(points[i]) && points[i].error <= TuneConfig::kLadderReach * choice.budget)
      candidates.push_back(&points[i]);
  auto distance = [&](const Point *p) {
    return p->error > 0 ? std::fabs(std::log(p->error / choice.budget))
                        : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Point *a, const Point *b) { return distance(a) < distance(b); });
  std::vector<Point> rungs;
  auto add = [&](const Point &p) {
    for (const Point &r : rungs)
      if (r.id == p.id && r.wg == p.wg) return;
    if (rungs.size() < cfg_.ladder) rungs.push_back(p);
  };
  if (choice.point && usable(*choice.point)) add(*choice.point);
  for (const Point *p : candidates) add(*p);
  std::stable_sort(rungs.begin(), rungs.end(),
                   [](const Point &a, const Point &b) { return a.time < b.time; });
  const auto base = m.find(base_id_);
  if (base != m.end() && base->second.best) {
    Point accurate;
    accurate.id = base_id_;
    accurate.wg = *base->second.best;
    accurate.time = base->second.best_time;
    rungs.push_back(accurate);
  }
  return rungs;
}

// Every rung of every ladder, and every static choice, on the held-out inputs.
Tuner::Plan Tuner::ladder_plan(const Ladders &ladders,
                               const std::map<std::string, std::vector<Choice>> &choices) const {
  Plan plan;
  for (const auto &[app, per_budget] : ladders) {
    auto put = [&](const Point &p) {
      auto &entry = plan.apps[app][p.id];
      entry.first = states_.at(app).at(p.id).v;
      if (std::find(entry.second.begin(), entry.second.end(), p.wg) == entry.second.end())
        entry.second.push_back(p.wg);
    };
    for (const auto &rungs : per_budget)
      for (const Point &p : rungs) put(p);
    for (const Choice &c : choices.at(app))
      if (c.point) put(*c.point);
  }
  return plan;
}

bool Tuner::select_by_canary(const std::map<std::string, std::vector<Choice>> &choices,
                             nlohmann::ordered_json &apps_json, const Checkpoint &checkpoint) {
  Ladders ladders;
  for (auto *app : cfg_.apps) {
    const std::vector<Point> points = points_of(*app);
    for (const Choice &c : choices.at(app->name))
      ladders[app->name].push_back(ladder_of(*app, points, c));
  }
  if (!stage("ladder", StageInputs::kTest, ladder_plan(ladders, choices), true, false, "",
             checkpoint))
    return false;
  for (auto *app : cfg_.apps)
    canary_json(*app, choices.at(app->name), ladders[app->name], apps_json[app->name]);
  return true;
}

namespace {

// The canary's description in each select block.
Json canary_settings_json(const CanarySettings &s, bool user_app, const Json &median_fraction) {
  return {
      {"samples",
       "whole work-group tiles of the rung's launch at full resolution, one drawn at random in "
       "each cell of a lattice over the grid (stratified), the same places for every rung of an "
       "input; the rung's CPU model and the accurate model computed there"},
      {"fraction", median_fraction},
      {"requested_fraction", s.fraction},
      {"min_tiles", s.min_tiles},
      {"confidence", s.confidence},
      {"margin",
       "one-sided upper confidence bound on the whole input's error: the ratio estimator of the "
       "metric over the sampled tiles plus Student's t quantile times its standard error (a "
       "simple random sample without replacement); ME over the sampled truth's range"},
      {"where", user_app ? "host threads, and the device for the app's truth kernel on the "
                           "sampled tiles"
                         : "host threads (CPU models), no device time"},
      {"threads", host_threads()},
      {"canary_ns",
       "wall time of the walk down the ladder on one input, fastest rung first, "
       "until one is within the budget (the accurate kernel needs no canary)"}};
}

// One budget's walks over the held-out inputs, input by input.
struct Walks {
  std::vector<std::string> ladder;  // labels, fastest first
  double budget = 0;
  std::string static_label;  // the static choice's rung ("" when none)
  Json per_input = Json::object();
  std::vector<double> errors, net, kernel, fixed;
  std::string problem;  // why the walks have no verdict
};

// The canary of one held-out input for every modelled rung (estimates and their true errors,
// for how the estimates track the errors).
void estimate_rungs(const AppDescriptor &app, const std::string &name, const Grid &input,
                    const CanarySettings &settings, const GridEvaluator &evaluate,
                    const std::map<std::string, Rung> &rungs,
                    std::map<std::string, RungOnInput> &here, Json &estimates) {
  for (const auto &[label, r] : rungs) {
    RungOnInput &on = here[label];
    if (r.exact || r.faulted || on.barred()) continue;
    const auto start = std::chrono::steady_clock::now();
    InputCanary canary(input, settings, canary_seed(name), AppParams{}, {evaluate});
    on.canary = canary.estimate({{&app, r.v, r.wg}});
    on.canary_ns = elapsed_ns(start);
    const double error = on.problem.empty() ? on.row->error->value(app.primary_metric)
                                            : std::numeric_limits<double>::quiet_NaN();
    estimates.push_back({{"rung", label},
                         {"input", name},
                         {"estimate", number_or_null(on.canary->estimate)},
                         {"margin", number_or_null(on.canary->margin)},
                         {"error", number_or_null(error)},
                         {"tiles", on.canary->tiles},
                         {"population", on.canary->population},
                         {"fraction", on.canary->fraction},
                         {"canary_ns", on.canary_ns}});
  }
}

// How the estimates track the true errors: the pairs whose error lies within estimate + margin.
Json tracking_json(const Json &estimates) {
  std::size_t pairs = 0, covered = 0;
  std::vector<double> ratios, fractions;
  for (const Json &e : estimates) {
    fractions.push_back(e["fraction"].get<double>());
    if (!e["error"].is_number() || !e["estimate"].is_number() || !e["margin"].is_number()) continue;
    const double error = e["error"], estimate = e["estimate"], margin = e["margin"];
    ++pairs;
    covered += error <= estimate + margin;
    if (error > 0) ratios.push_back(estimate / error);
  }
  return {{"pairs", pairs},
          {"covered", covered},
          {"coverage", number_or_null(pairs ? static_cast<double>(covered) / pairs : NAN)},
          {"median_estimate_over_error", number_or_null(median(ratios))},
          {"median_fraction", number_or_null(median(fractions))}};
}

// A deployment's walk on one input: a fresh canary, the fastest rung first, until one's bound
// is within the budget; the accurate kernel needs none. A rung that faulted is never picked, and
// a NaN estimate (a broken truth) never passes.
void walk_input(const AppDescriptor &app, const std::string &name, const Grid &input,
                const CanarySettings &settings, const GridEvaluator &evaluate,
                const std::map<std::string, Rung> &rungs,
                const std::map<std::string, RungOnInput> &here, Walks &w) {
  InputCanary canary(input, settings, canary_seed(name), AppParams{}, {evaluate});
  const auto start = std::chrono::steady_clock::now();
  const Rung *ran = nullptr;
  std::optional<CanaryEstimate> estimate;
  int tried = 0;
  for (const std::string &label : w.ladder) {
    const Rung &r = rungs.at(label);
    if (r.faulted || here.at(label).barred()) continue;
    if (r.exact) {
      ran = &r;
      break;
    }
    ++tried;
    const CanaryEstimate e = canary.estimate({{&app, r.v, r.wg}});
    if (e.upper() <= w.budget) {
      ran = &r, estimate = e;
      break;
    }
  }
  const double canary_ns = elapsed_ns(start);
  if (!ran) {
    std::string why = "every rung faulted";
    for (const auto &[label, on] : here)
      if (rungs.at(label).exact && on.row && on.row->reference_failed())
        why = on.row->status + ": " + on.row->reason;
    w.per_input[name] = {{"rung", nullptr}, {"problem", why}};
    if (w.problem.empty()) w.problem = "no rung can run on " + name + " (" + why + ")";
    return;
  }
  const RungOnInput &on = here.at(ran->label);
  const RungOnInput *accurate = nullptr;
  for (const auto &[label, r] : rungs)
    if (r.exact) accurate = &here.at(label);
  if (!on.problem.empty() || !on.time || !accurate || !accurate->time) {
    const std::string why = !on.problem.empty()
                                ? on.problem
                                : "no time of " + ran->label + " or the accurate kernel on " + name;
    w.per_input[name] = {{"rung", ran->label}, {"problem", why}};
    if (w.problem.empty()) w.problem = why;
    return;
  }
  const double error = on.row->error->value(app.primary_metric);
  w.errors.push_back(error);
  w.net.push_back(*accurate->time / (*on.time + canary_ns));
  w.kernel.push_back(*accurate->time / *on.time);
  const auto fixed = here.find(w.static_label);
  if (fixed != here.end() && fixed->second.time)
    w.fixed.push_back(*accurate->time / *fixed->second.time);
  w.per_input[name] = {{"rung", ran->label},
                       {"estimate", estimate ? number_or_null(estimate->estimate) : Json(0.0)},
                       {"margin", estimate ? number_or_null(estimate->margin) : Json(0.0)},
                       {"error", error},
                       {"kernel_ns", *on.time},
                       {"canary_ns", canary_ns},
                       {"accurate_ns", *accurate->time},
                       {"rungs_tried", tried}};
}

// A budget's select block: the ladder, the canary, each input's walk, and the verdict over the
// held-out inputs (the percentile of the true errors of the rungs that ran; speedups as medians
// over inputs of per-input ratios).
Json select_json(const Walks &w, const Json &canary, double percentile_p) {
  Json select = {{"method", "canary"}, {"ladder", w.ladder}, {"canary", canary}};
  select["per_input"] = w.per_input;
  if (!w.problem.empty() || w.errors.empty()) {
    select["percentile_error"] = nullptr;
    select["holds"] = nullptr;
    select["problem"] = w.problem.empty() ? "no held-out input" : w.problem;
    return select;
  }
  const double p = percentile(w.errors, percentile_p);
  select["percentile_error"] = p;
  select["max"] = *std::max_element(w.errors.begin(), w.errors.end());
  select["holds"] = p <= w.budget;
  select["speedup_net"] = number_or_null(median(w.net));
  select["speedup_kernel"] = number_or_null(median(w.kernel));  // the canary free
  select["speedup_static"] = number_or_null(median(w.fixed));   // the static choice
  return select;
}

}  // namespace

void Tuner::canary_json(const AppDescriptor &app, const std::vector<Choice> &choices,
                        const std::vector<std::vector<Point>> &ladders, Json &app_json) const {
  const auto &m = states_.at(app.name);
  std::map<std::string, Rung> rungs;  // every rung once, by label
  std::vector<Walks> walks(choices.size());
  for (std::size_t b = 0; b < choices.size(); ++b) {
    walks[b].budget = choices[b].budget;
    if (const auto &p = choices[b].point) walks[b].static_label = p->id + "@" + shape_label(p->wg);
    for (const Point &p : ladders[b]) {
      const std::string label = p.id + "@" + shape_label(p.wg);
      walks[b].ladder.push_back(label);
      Rung r{label, m.at(p.id).v, p.wg, is_exact(m.at(p.id).v), false};
      for (const auto &src : cfg_.test)
        if (const TuneRow *t = find("ladder", app.name, p.id, shape_label(p.wg), src.name))
          r.faulted = r.faulted || t->row.device_faulted();
      rungs.emplace(label, r);
    }
  }
  std::unique_ptr<AppTruth> truth;  // a user app's outputs on the sampled tiles
  GridEvaluator evaluate;
  std::string problem;
  if (!app.point) try {
      truth = std::make_unique<AppTruth>(env_, app, cfg_.kernel_root, AppParams{},
                                         cfg_.extra_build_options);
      evaluate = [&truth](const GridD &g) { return truth->run(g); };
    } catch (const std::exception &e) {
      problem = std::string("the app's truth kernel for the canary: ") + e.what();
    }
  Json estimates = Json::array();
  for (const auto &src : cfg_.test) {
    std::map<std::string, RungOnInput> here;
    for (const auto &[label, r] : rungs) {
      RungOnInput &on = here[label];
      const TuneRow *t = find("ladder", app.name, r.v.id(), shape_label(r.wg), src.name);
      on.row = t ? &t->row : nullptr;
      if (!on.row || !on.row->ok() || !on.row->error)
        on.problem =
            (on.row ? on.row->status + ": " + on.row->reason : "not measured") + " on " + src.name;
      else if (const auto time = raw_objective_time(*on.row))
        on.time = time->median;
    }
    if (!problem.empty()) break;
    const Grid input = load_image_source(src, cfg_.size);
    estimate_rungs(app, src.name, input, cfg_.canary, evaluate, rungs, here, estimates);
    for (Walks &w : walks) walk_input(app, src.name, input, cfg_.canary, evaluate, rungs, here, w);
  }
  const Json tracking = tracking_json(estimates);
  app_json["canary"] = {{"estimates", estimates}, {"tracking", tracking}};
  if (!problem.empty()) app_json["canary"]["problem"] = problem;
  Json settings = canary_settings_json(cfg_.canary, !app.point, tracking["median_fraction"]);
  for (std::size_t b = 0; b < walks.size(); ++b) {
    if (!problem.empty()) walks[b].problem = problem;
    app_json["choices"][b]["select"] = select_json(walks[b], settings, cfg_.percentile);
  }
}

}  // namespace kperf
