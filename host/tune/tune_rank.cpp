// The tuner's launch-shape climb (its sweep) and its rank stage: each budget's finalists timed
// again beside the accurate kernel in interleaved rounds, and the stable rule that chooses.

#include <algorithm>
#include <set>
#include <tuple>

#include "choice.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

namespace kperf {

using namespace tune_detail;

std::vector<WorkGroup> neighbour_shapes(const std::vector<WorkGroup> &shapes, const WorkGroup &wg) {
  std::vector<WorkGroup> out;
  for (const auto &s : shapes) {
    const int changed = (s.x != wg.x || s.y != wg.y) + (s.vec != wg.vec) + (s.py != wg.py);
    if (changed == 1) out.push_back(s);
  }
  return out;
}

std::optional<std::size_t> stable_choice(const std::vector<RankedCandidate> &candidates,
                                         double tolerance) {
  if (candidates.empty()) return std::nullopt;
  double fastest = candidates.front().time;
  for (const auto &c : candidates) fastest = std::min(fastest, c.time);
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const RankedCandidate &c = candidates[i];
    if (c.time > fastest * (1 + tolerance)) continue;
    if (!best || c.error < candidates[*best].error ||
        (c.error == candidates[*best].error && c.time < candidates[*best].time))
      best = i;
  }
  return best;
}

bool Tuner::sweep(const std::string &origin, const std::string &baseline,
                  const Checkpoint &checkpoint) {
  if (cfg_.sweep_every_shape)
    return TuneStages(*this).stage("sweep", StageInputs::kFirstTrain, plan_of(origin, true), true,
                                   false, baseline, checkpoint);
  // In rounds, each timing what the climb asks for next, until no survivor has a shape left to
  // try. A shape is planned once: one that gave no row (its process stopped) is not retried here.
  // The rows carry no round, so a resumed tune replays the climb from them.
  std::set<std::tuple<std::string, std::string, WorkGroup>> planned;
  while (true) {
    Plan plan;
    for (auto *app : cfg_.apps)
      for (auto &[id, s] : states_[app->name]) {
        if (s.origin.rfind(origin, 0) != 0 || !s.problem.empty()) continue;
        const bool baseline_variant = id == base_id_ || id == paraprox_id_;
        std::vector<WorkGroup> fresh;
        for (const auto &wg : baseline_variant ? cfg_.shapes : climb_shapes(*app, id, s))
          if (!ledger_->find("sweep", app->name, id, shape_label(wg), cfg_.train[0].name) &&
              planned.insert({app->name, id, wg}).second)
            fresh.push_back(wg);
        if (!fresh.empty()) plan.apps[app->name][id] = {s.v, fresh};
      }
    if (plan.empty()) return true;
    if (!TuneStages(*this).stage("sweep", StageInputs::kFirstTrain, plan, true, false, baseline,
                                 checkpoint))
      return false;
  }
}

// The shapes a survivor's climb wants timed: its starting shapes (its probe shape, the accurate
// kernel's fastest, and for a combination each of its atoms' fastest) and the neighbours of its
// own fastest so far. Every shape when none it ran at so far ran.
std::vector<WorkGroup> Tuner::climb_shapes(const AppDescriptor &app, const std::string &id,
                                           const State &s) const {
  bool any_row = false;
  auto fastest = [&](const std::string &variant, bool own) -> std::optional<WorkGroup> {
    std::optional<WorkGroup> best;
    double best_time = 0;
    for (const auto &wg : cfg_.shapes) {
      const TuneRow *r =
          ledger_->find("sweep", app.name, variant, shape_label(wg), cfg_.train[0].name);
      if (!r) continue;
      any_row = any_row || own;
      const std::optional<TimingStats> t = r->row.ok() ? ledger_->objective_time(*r) : std::nullopt;
      if (t && (!best || t->median < best_time)) best = wg, best_time = t->median;
    }
    return best;
  };
  std::vector<WorkGroup> shapes = {*s.probe};
  if (const auto b = fastest(base_id_, false)) shapes.push_back(*b);
  if (s.origin == "combination")
    for (const AxisGroup g : all_groups()) {
      const std::string atom = variant_id(with_group(base_, g, s.v));
      if (atom == base_id_ || atom == id) continue;
      if (const auto b = fastest(atom, false)) shapes.push_back(*b);
    }
  if (const auto own = fastest(id, true)) {
    const std::vector<WorkGroup> next = neighbour_shapes(cfg_.shapes, *own);
    shapes.insert(shapes.end(), next.begin(), next.end());
  } else if (any_row) {
    return cfg_.shapes;
  }
  return shapes;
}

std::vector<Tuner::Point> finalist_points(const std::vector<Tuner::Point> &points, double budget) {
  std::vector<FrontPoint> front;
  for (const auto &p : points) front.push_back({p.time, p.error});
  std::vector<Tuner::Point> out;
  for (std::size_t i : finalist_indices(front, budget)) out.push_back(points[i]);
  return out;
}

Tuner::Plan Tuner::rank_plan(const std::map<std::string, std::vector<Point>> &points) const {
  Plan plan;
  for (auto *app : cfg_.apps) {
    const auto &m = states_.at(app->name);
    auto add = [&](const std::string &id, const WorkGroup &wg) {
      auto &entry = plan.apps[app->name][id];
      entry.first = m.at(id).v;
      if (std::find(entry.second.begin(), entry.second.end(), wg) == entry.second.end())
        entry.second.push_back(wg);
    };
    for (const std::string &id : {base_id_, paraprox_id_}) {
      const auto it = m.find(id);
      if (it != m.end() && it->second.problem.empty() && it->second.best) add(id, *it->second.best);
    }
    const auto p = points.find(app->name);
    if (p == points.end()) continue;
    for (double budget : cfg_.budgets)
      for (const Point &f : finalist_points(p->second, budget)) add(f.id, f.wg);
  }
  return plan;
}

}  // namespace kperf
