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
#include "select_device.hpp"
#include "select_walk.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

namespace kperf {

using namespace tune_detail;

namespace {

using Json = nlohmann::ordered_json;

std::string label_of(const std::string &id, const WorkGroup &wg) {
  return id + "@" + shape_label(wg);
}

}  // namespace

// The front's points within kLadderReach of the budget (the accurate kernel and what the canary
// cannot model aside), the static choice first, then those nearest the budget on a log scale, at
// most --ladder of them, fastest first; the accurate kernel at its best shape last.
std::vector<Tuner::Point> TuneReport::ladder_of(const AppDescriptor &app,
                                                const std::vector<Point> &points,
                                                const Choice &choice) const {
  const auto &m = t_.states_.at(app.name);
  std::vector<FrontPoint> fp;
  std::vector<bool> usable;
  std::optional<std::size_t> chosen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point &p = points[i];
    const Variant &v = m.at(p.id).v;
    fp.push_back({p.time, p.error});
    usable.push_back(!is_exact(v) && !canary_problem({&app, v, p.wg}));
    if (choice.point && choice.point->id == p.id && choice.point->wg == p.wg) chosen = i;
  }
  std::vector<Point> rungs;
  for (std::size_t i :
       ladder_rule(fp, usable, chosen, choice.budget, TuneConfig::kLadderReach, t_.cfg_.ladder))
    rungs.push_back(points[i]);
  const auto base = m.find(t_.base_id_);
  if (base != m.end() && base->second.best) {
    Point accurate;
    accurate.id = t_.base_id_;
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
    const std::vector<Point> points = TuneReport(*this).points_of(*app);
    for (const Choice &c : choices.at(app->name))
      ladders[app->name].push_back(TuneReport(*this).ladder_of(*app, points, c));
  }
  if (!TuneStages(*this).stage("ladder", StageInputs::kTest, ladder_plan(ladders, choices), true,
                               false, "", checkpoint))
    return false;
  for (auto *app : cfg_.apps)
    TuneReport(*this).canary_json(*app, choices.at(app->name), ladders[app->name],
                                  apps_json[app->name]);
  return true;
}

namespace {

// What the ladder stage measured of every timed rung and static choice (by label) on one input.
RungMeasures measures_on(const TuneLedger &ledger, const AppDescriptor &app,
                         const std::map<std::string, std::pair<std::string, WorkGroup>> &timed,
                         const std::string &input) {
  RungMeasures here;
  for (const auto &[label, what] : timed) {
    const TuneRow *t = ledger.find("ladder", app.name, what.first, shape_label(what.second), input);
    RungMeasure &on = here[label];
    if (!t || !t->row.ok() || !t->row.error) {
      on.problem =
          (t ? std::string(status_name(t->row.status)) + ": " + t->row.reason : "not measured") +
          " on " + input;
      on.barred = t && (t->row.device_faulted() || t->row.reference_failed());
      continue;
    }
    on.error = t->row.error->value(app.primary_metric);
    if (const auto time = ledger.raw_objective_time(t->row)) on.time = time->median;
  }
  return here;
}

// One device call's cost, per input, in the app's canary block.
Json device_call_json(const std::string &input, const DeviceEstimates &d) {
  return {{"input", input},       {"rungs", d.by_label.size()}, {"device_ns", d.device_ns},
          {"busy_ns", d.busy_ns}, {"wall_ns", d.wall_ns},       {"launches", d.launches}};
}

}  // namespace

void TuneReport::canary_json(const AppDescriptor &app, const std::vector<Choice> &choices,
                             const std::vector<std::vector<Point>> &ladders, Json &app_json) const {
  const auto &m = t_.states_.at(app.name);
  std::map<std::string, LadderRung> rungs;  // every rung once, by label
  std::vector<LadderWalks> walks;
  for (std::size_t b = 0; b < choices.size(); ++b) {
    std::vector<std::string> labels;
    for (const Point &p : ladders[b]) {
      const std::string label = label_of(p.id, p.wg);
      labels.push_back(label);
      LadderRung r{label, {{&app, m.at(p.id).v, p.wg}}, is_exact(m.at(p.id).v), false};
      for (const auto &src : t_.cfg_.test)
        if (const TuneRow *t =
                t_.ledger_->find("ladder", app.name, p.id, shape_label(p.wg), src.name))
          r.faulted = r.faulted || t->row.device_faulted();
      rungs.emplace(label, r);
    }
    const auto &chosen = choices[b].point;
    walks.emplace_back(labels, choices[b].budget,
                       chosen ? label_of(chosen->id, chosen->wg) : std::string());
  }
  std::unique_ptr<AppTruth> truth;  // a user app's outputs on the sampled tiles
  CanaryInput in;
  in.settings = t_.cfg_.canary;
  std::string problem;
  if (!app.point) try {
      truth = std::make_unique<AppTruth>(t_.env_, app, t_.cfg_.kernel_root, AppParams{},
                                         t_.cfg_.extra_build_options);
      in.evaluators = {[&truth](const GridD &g) { return truth->run(g); }};
    } catch (const std::exception &e) {
      problem = std::string("the app's truth kernel for the canary: ") + e.what();
    }
  CanaryPlacement where;
  where.user_truth_kernel = !app.point;
  std::unique_ptr<SelectDeviceCanary> device;
  if (problem.empty())
    device = device_canary(rungs, where);
  else
    where.reason = problem;
  Json calibration;  // before the walks: their margins are the calibrated ones
  if (problem.empty() && t_.cfg_.canary_calibrate)
    in.margin_scale = calibrate_canary(app, rungs, in, device.get(), calibration);
  // What the ladder stage timed: the rungs and the static choices, by label.
  std::map<std::string, std::pair<std::string, WorkGroup>> timed;
  for (const auto &[label, r] : rungs) timed[label] = {r.stages[0].variant.id(), r.stages[0].wg};
  for (const Choice &c : choices)
    if (c.point) timed[label_of(c.point->id, c.point->wg)] = {c.point->id, c.point->wg};
  Json estimates = Json::array(), calls = Json::array();
  for (const auto &src : t_.cfg_.test) {
    if (!problem.empty()) break;
    const RungMeasures here = measures_on(*t_.ledger_, app, timed, src.name);
    const Grid grid = load_image_source(src, t_.cfg_.size);
    in.name = src.name;
    in.grid = &grid;
    std::optional<DeviceEstimates> d;
    if (device) try {
        d = device->estimate(in, rungs, here);
        calls.push_back(device_call_json(src.name, *d));
      } catch (const std::exception &e) {
        // Its reason is said once; this input and the later ones take the host canary.
        where.device_problem =
            "on " + src.name + ": " + e.what() + "; the host canary from this input on";
        device.reset();
      }
    estimate_rungs(in, rungs, here, estimates, d ? &*d : nullptr);
    for (LadderWalks &w : walks) w.walk(in, rungs, here, d ? &*d : nullptr);
  }
  const Json tracking = tracking_json(estimates);
  app_json["canary"] = {{"estimates", estimates}, {"tracking", tracking}};
  if (!calibration.is_null()) app_json["canary"]["calibration"] = calibration;
  if (where.device) app_json["canary"]["device_calls"] = calls;
  if (!problem.empty()) app_json["canary"]["problem"] = problem;
  for (std::size_t b = 0; b < walks.size(); ++b) {
    if (!problem.empty()) walks[b].fail(problem);
    const Json settings =
        canary_settings_json(t_.cfg_.canary, where, walks[b].ladder(), tracking["median_fraction"]);
    app_json["choices"][b]["select"] = walks[b].json(settings, t_.cfg_.percentile);
  }
}

// The device canary of an app's rungs where --canary-on and the device allow it; `where` says
// where the canaries run, and why not on the device.
std::unique_ptr<SelectDeviceCanary> TuneReport::device_canary(
    const std::map<std::string, LadderRung> &rungs, CanaryPlacement &where) const {
  if (const auto why = host_canary_reason(t_.env_, t_.cfg_.canary_on)) {
    where.reason = *why;
    return nullptr;
  }
  try {
    auto device = std::make_unique<SelectDeviceCanary>(
        t_.env_, t_.cfg_.kernel_root, t_.cfg_.canary, t_.cfg_.extra_build_options,
        t_.cfg_.cold ? t_.cfg_.flush_bytes : 0, rungs);
    where.device = true;
    where.host_rungs = device->host_rungs();
    where.device_rungs = device->device_rungs();
    where.test_scale = device->test_scale();
    return device;
  } catch (const std::exception &e) {
    where.reason = std::string("the device canary could not be set up: ") + e.what();
    return nullptr;
  }
}

}  // namespace kperf
