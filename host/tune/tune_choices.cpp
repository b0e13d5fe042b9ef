// The tuner's answer: each app's front of confirmed points, one choice per budget, the held-out
// test of every choice and the document that reports them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "choice.hpp"
#include "fault_journal.hpp"
#include "kernel_axes.hpp"
#include "stats.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

namespace kperf {

using namespace tune_detail;

std::vector<Tuner::Point> TuneReport::points_of(const AppDescriptor &app) const {
  std::vector<Point> points;
  const auto &m = t_.states_.at(app.name);
  for (const auto &id : t_.order_.at(app.name)) {
    const State &s = m.at(id);
    if (!s.problem.empty() || !s.best) continue;
    for (const auto &[wg, stage_name] : point_shapes(app, id, s)) {
      const TuneRow *found =
          t_.ledger_->find("sweep", app.name, id, shape_label(wg), t_.cfg_.train[0].name);
      const ResultRow *timed = found ? &found->row : nullptr;
      const std::optional<TimingStats> t =
          found ? t_.ledger_->objective_time(*found) : std::nullopt;
      if (!timed || !timed->ok() || !t) continue;
      std::string problem;
      Point p{id, wg, t->median, t->cv, {}, 0, timed->key, found->device};
      p.errors = t_.ledger_->train_errors(stage_name, app, s.v, wg, problem);
      if (!problem.empty()) continue;
      p.error = percentile(p.errors, t_.cfg_.percentile);
      points.push_back(p);
    }
  }
  return points;
}

std::vector<std::pair<WorkGroup, std::string>> TuneReport::point_shapes(const AppDescriptor &app,
                                                                        const std::string &id,
                                                                        const State &s) const {
  std::vector<std::pair<WorkGroup, std::string>> out = {{*s.probe, "probe"}};
  if (!s.best) return out;
  if (!(*s.best == *s.probe)) out.emplace_back(*s.best, "confirm");
  std::vector<std::pair<double, WorkGroup>> near;
  for (const auto &wg : t_.cfg_.shapes) {
    if (wg == *s.best || wg == *s.probe) continue;
    const TuneRow *r =
        t_.ledger_->find("sweep", app.name, id, shape_label(wg), t_.cfg_.train[0].name);
    const std::optional<TimingStats> t =
        r && r->row.ok() ? t_.ledger_->objective_time(*r) : std::nullopt;
    if (t && t->median <= s.best_time * (1 + TuneConfig::kShapeBand))
      near.push_back({t->median, wg});
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (std::size_t i = 0; i < near.size() && i < TuneConfig::kNearShapes; ++i)
    out.emplace_back(near[i].second, "confirm");
  return out;
}

// Per budget: of the finalists that the rank stage timed, stable_choice(); the fastest point in
// the sweep where it timed none of them.
std::vector<Tuner::Choice> TuneReport::choose(const AppDescriptor &app,
                                              const std::vector<Point> &points) const {
  std::vector<Choice> out;
  for (double budget : t_.cfg_.budgets) {
    Choice c{budget, std::nullopt, {}, std::nullopt};
    std::vector<RankedCandidate> ranked;
    for (const Point &p : finalist_points(points, budget))
      if (const auto t = t_.ledger_->rank_time(app.name, p.id, p.wg)) {
        c.finalists.emplace_back(p, *t);
        ranked.push_back({*t, p.error});
      }
    if (const auto i = stable_choice(ranked, t_.cfg_.tie_tolerance)) {
      c.point = c.finalists[*i].first;
      c.ranked_time = c.finalists[*i].second;
    } else {
      for (const auto &p : points)
        if (p.error <= budget && (!c.point || p.time < c.point->time)) c.point = p;
    }
    out.push_back(c);
  }
  return out;
}

// An app's points, Pareto front and pruned variants.
nlohmann::ordered_json TuneReport::app_json(const AppDescriptor &app,
                                            const std::vector<Point> &points) const {
  const auto &m = t_.states_.at(app.name);
  const double base_time = best_time_of(app.name, t_.base_id_);
  const double global_time = best_time_of(app.name, t_.paraprox_id_);
  nlohmann::ordered_json j;
  j["primary_metric"] = metric_name(app.primary_metric);
  j["accurate_time_ns"] = base_time;
  j["paraprox_baseline_time_ns"] = number_or_null(global_time > 0 ? global_time : NAN);
  if (t_.ledger_->apps_have_homes()) {
    j["device_slot"] =
        t_.ledger_->home_device(app.name);  // where every row of the app was measured
  } else if (t_.cfg_.multi_device()) {
    // Each device's accurate kernel at its best shape, per timed stage: how far apart the devices
    // were, and the scale each one's sweep rows were put on.
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (int d = 0; d <= static_cast<int>(t_.cfg_.worker_devices.size()); ++d) {
      nlohmann::ordered_json dj = {{"slot", d}};
      for (const char *origin : {"atom", "combination"}) {
        const auto t = d == 0 ? t_.ledger_->best_baseline("sweep", app.name, 0)
                              : t_.ledger_->best_baseline(std::string("sweep-baseline:") + origin,
                                                          app.name, d);
        dj[std::string(origin) + "_accurate_time_ns"] = number_or_null(t ? *t : NAN);
        if (d == 0) break;
      }
      devices.push_back(dj);
    }
    j["device_baselines"] = devices;
  }
  auto point_json = [&](const Point &p) {
    const State &s = m.at(p.id);
    nlohmann::ordered_json pj;
    pj["variant"] = p.id;
    pj["family"] = family_of(s.v);
    pj["origin"] = s.origin;
    pj["wg"] = shape_label(p.wg);
    pj["key"] = p.key;
    pj["time_ns"] = p.time;  // under --devices, on the first device's scale
    pj["cv"] = p.cv;
    if (t_.cfg_.multi_device()) pj["device_slot"] = p.device;
    pj["speedup"] = number_or_null(base_time > 0 ? base_time / p.time : NAN);
    pj["speedup_vs_global"] = number_or_null(global_time > 0 ? global_time / p.time : NAN);
    pj["train_error"] = p.error;
    pj["train_mean"] = std::accumulate(p.errors.begin(), p.errors.end(), 0.0) /
                       static_cast<double>(p.errors.size());
    pj["train_max"] = *std::max_element(p.errors.begin(), p.errors.end());
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < p.errors.size(); ++i) per[t_.cfg_.train[i].name] = p.errors[i];
    pj["train_errors"] = per;
    if (!t_.cfg_.sweep_every_shape) pj["climbed"] = !s.climb_stopped;
    if (s.proposal)
      pj["predicted"] = {{"time_ns", s.proposal->predicted_time},
                         {"error", s.proposal->predicted_error}};
    return pj;
  };
  std::vector<FrontPoint> fp;
  for (const auto &p : points) fp.push_back({p.time, p.error});
  const std::vector<std::size_t> front = pareto_indices(fp);
  const std::set<std::size_t> on_front(front.begin(), front.end());
  j["points"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto pj = point_json(points[i]);
    pj["pareto"] = on_front.count(i) > 0;
    j["points"].push_back(pj);
  }
  j["front"] = nlohmann::ordered_json::array();
  for (std::size_t i : front) j["front"].push_back(point_json(points[i]));
  j["pruned"] = nlohmann::ordered_json::array();
  for (const auto &id : t_.order_.at(app.name)) {
    const State &s = m.at(id);
    if (s.problem.empty()) continue;
    j["pruned"].push_back({{"variant", id},
                           {"family", family_of(s.v)},
                           {"origin", s.origin},
                           {"at", s.pruned_at},
                           {"probe_wg", s.probe ? shape_label(*s.probe) : std::string()},
                           {"train_error", number_or_null(s.probe_error)},
                           {"reason", s.problem}});
    if (s.proposal)
      j["pruned"].back()["predicted"] = {{"time_ns", s.proposal->predicted_time},
                                         {"error", s.proposal->predicted_error}};
  }
  return j;
}

// 5. The choices (and the accurate kernel, for the gallery) on the held-out inputs.
Tuner::Plan Tuner::test_plan(const std::map<std::string, std::vector<Choice>> &choices) {
  Plan plan;
  for (auto *app : cfg_.apps) {
    auto &m = states_[app->name];
    if (m.count(base_id_) && m.at(base_id_).best)
      plan.apps[app->name][base_id_] = {base_, {*m.at(base_id_).best}};
    for (const auto &c : choices.at(app->name))
      if (c.point) {
        auto &entry = plan.apps[app->name][c.point->id];
        entry.first = m.at(c.point->id).v;
        if (std::find(entry.second.begin(), entry.second.end(), c.point->wg) == entry.second.end())
          entry.second.push_back(c.point->wg);
      }
  }
  return plan;
}

// The rank stage behind a choice: its time and speedups there (which replace the sweep's, kept
// as sweep_speedup), and every finalist it timed.
void TuneReport::ranked_json(const AppDescriptor &app, const Choice &c,
                             nlohmann::ordered_json &cj) const {
  const auto &m = t_.states_.at(app.name);
  auto baseline = [&](const std::string &id) -> std::optional<double> {
    const auto it = m.find(id);
    if (it == m.end() || !it->second.best) return std::nullopt;
    return t_.ledger_->rank_time(app.name, id, *it->second.best);
  };
  const std::optional<double> base = baseline(t_.base_id_), global = baseline(t_.paraprox_id_);
  nlohmann::ordered_json &chosen = cj["chosen"];
  chosen["sweep_speedup"] = chosen.value("speedup", nlohmann::ordered_json(nullptr));
  chosen["sweep_speedup_vs_global"] =
      chosen.value("speedup_vs_global", nlohmann::ordered_json(nullptr));
  chosen["ranked_time_ns"] = *c.ranked_time;
  chosen["speedup"] = number_or_null(base ? *base / *c.ranked_time : NAN);
  chosen["speedup_vs_global"] = number_or_null(global ? *global / *c.ranked_time : NAN);
  nlohmann::ordered_json finalists = nlohmann::ordered_json::array();
  for (const auto &[p, t] : c.finalists)
    finalists.push_back({{"variant", p.id},
                         {"wg", shape_label(p.wg)},
                         {"ranked_time_ns", t},
                         {"sweep_time_ns", p.time},
                         {"train_error", p.error}});
  cj["rank"] = {{"accurate_time_ns", number_or_null(base ? *base : NAN)},
                {"paraprox_baseline_time_ns", number_or_null(global ? *global : NAN)},
                {"tolerance", t_.cfg_.tie_tolerance},
                {"finalists", finalists}};
}

// Per budget: the choice, its errors on the held-out inputs and the verdict.
nlohmann::ordered_json TuneReport::choices_json(const AppDescriptor &app,
                                                const std::vector<Choice> &choices,
                                                const nlohmann::ordered_json &points) const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  // A training input whose truth is broken (SPEC 15) leaves nothing to choose from, and no verdict.
  const TuneRow *broken = nullptr;
  for (const TuneRow &t : t_.ledger_->rows())
    if (t.stage != "test" && t.row.app == app.name && t.row.reference_failed()) {
      broken = &t;
      break;
    }
  for (const auto &c : choices) {
    nlohmann::ordered_json cj;
    cj["budget"] = c.budget;
    if (broken) {
      cj["chosen"] = nullptr;
      add_broken_truth_verdict(cj, broken->row.input_name, broken->row.reason);
      list.push_back(cj);
      continue;
    }
    if (!c.point) {
      cj["chosen"] = nullptr;
      cj["verdict"] = "no configuration is within the budget on the training inputs";
      list.push_back(cj);
      continue;
    }
    const State &s = t_.states_.at(app.name).at(c.point->id);
    cj["chosen"] = {{"variant", c.point->id},         {"family", family_of(s.v)},
                    {"wg", shape_label(c.point->wg)}, {"key", c.point->key},
                    {"time_ns", c.point->time},       {"train_error", c.point->error}};
    for (const auto &pj : points)
      if (pj["key"] == c.point->key) {
        cj["chosen"]["speedup"] = pj["speedup"];
        cj["chosen"]["speedup_vs_global"] = pj["speedup_vs_global"];
      }
    if (c.ranked_time) ranked_json(app, c, cj);
    cj["exact"] = is_exact(s.v);
    std::vector<HeldOutError> errors;
    std::string problem;
    for (const auto &src : t_.cfg_.test) {
      const TuneRow *found =
          t_.ledger_->find("test", app.name, c.point->id, shape_label(c.point->wg), src.name);
      const ResultRow *r = found ? &found->row : nullptr;
      if (!r || !r->ok() || !r->error) {
        problem = (r ? std::string(status_name(r->status)) + ": " + r->reason : "not measured") +
                  " on " + src.name;
        break;
      }
      double e = r->error->value(app.primary_metric);
      for (double rep : r->error_reps) e = std::max(e, rep);
      errors.push_back({src.name, e, r->key, r->output_file});
    }
    add_held_out_verdict(cj, errors, problem, c.budget, t_.cfg_.percentile, is_exact(s.v));
    list.push_back(cj);
  }
  return list;
}

// The accurate kernel's saved held-out outputs, for the report's gallery.
nlohmann::ordered_json TuneReport::accurate_outputs_json(const AppDescriptor &app) const {
  nlohmann::ordered_json acc = nlohmann::ordered_json::object();
  const auto &m = t_.states_.at(app.name);
  const auto base = m.find(t_.base_id_);
  if (base == m.end() || !base->second.best) return acc;
  const WorkGroup wg = *base->second.best;
  for (const auto &src : t_.cfg_.test)
    if (const TuneRow *r =
            t_.ledger_->find("test", app.name, t_.base_id_, shape_label(wg), src.name))
      acc[src.name] = {{"output_file", r->row.output_file}, {"key", r->row.key}};
  return acc;
}

}  // namespace kperf
