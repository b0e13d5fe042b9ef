// The tuner's launch-shape climb (its sweep) and its rank stage: each budget's finalists timed
// again beside the accurate kernel in interleaved rounds, and the stable rule that chooses.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <stdexcept>
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

double climb_band_from_text(const std::string &text) {
  if (text == "all") return std::numeric_limits<double>::infinity();
  char *end = nullptr;
  const double band = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(band > 0) || !std::isfinite(band))
    throw std::invalid_argument("--climb-band " + text +
                                ": expected a fraction above 0 (0.25) or all");
  return band;
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
    TuneStages(*this).stop_distant_climbs(origin);
    Plan plan;
    for (auto *app : cfg_.apps)
      for (auto &[id, s] : states_[app->name]) {
        if (s.origin.rfind(origin, 0) != 0 || !s.problem.empty()) continue;
        const bool baseline_variant = id == base_id_ || id == paraprox_id_;
        std::vector<WorkGroup> fresh;
        for (const auto &wg :
             baseline_variant ? cfg_.shapes : TuneStages(*this).climb_shapes(*app, id, s))
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

std::optional<std::pair<WorkGroup, double>> TuneStages::fastest_swept(
    const AppDescriptor &app, const std::string &variant) const {
  std::optional<std::pair<WorkGroup, double>> best;
  for (const auto &wg : t_.cfg_.shapes) {
    const TuneRow *r =
        t_.ledger_->find("sweep", app.name, variant, shape_label(wg), t_.cfg_.train[0].name);
    const std::optional<TimingStats> t =
        r && r->row.ok() ? t_.ledger_->objective_time(*r) : std::nullopt;
    if (t && (!best || t->median < best->second)) best = std::make_pair(wg, t->median);
  }
  return best;
}

// Before each round of the climb: a survivor whose fastest time so far lies outside climb_band
// of the fastest of every budget it meets stops climbing. Finalists lie within kFinalistBand of
// a budget's fastest; replayed on three committed H200 tunes at 2048^2, a band of 0.25 left
// every budget's finalists as the full climb had them, for under half the sweep's programs.
void TuneStages::stop_distant_climbs(const std::string &origin) {
  if (!std::isfinite(t_.cfg_.climb_band)) return;
  for (auto *app : t_.cfg_.apps) {
    auto &m = t_.states_[app->name];
    auto meets = [&](const Tuner::State &s, double budget) {
      return is_exact(s.v) || s.probe_error <= budget;
    };
    std::map<std::string, double> so_far;
    for (const auto &[id, s] : m)
      if (s.problem.empty())
        if (const auto f = fastest_swept(*app, id)) so_far[id] = f->second;
    std::vector<double> fastest(t_.cfg_.budgets.size(), std::numeric_limits<double>::infinity());
    for (std::size_t b = 0; b < fastest.size(); ++b)
      for (const auto &[id, t] : so_far)
        if (meets(m.at(id), t_.cfg_.budgets[b])) fastest[b] = std::min(fastest[b], t);
    for (auto &[id, s] : m) {
      const auto own = so_far.find(id);
      if (s.origin.rfind(origin, 0) != 0 || !s.problem.empty() || s.climb_stopped ||
          id == t_.base_id_ || id == t_.paraprox_id_ || own == so_far.end())
        continue;
      bool near = false;
      for (std::size_t b = 0; b < fastest.size(); ++b)
        near = near || (meets(s, t_.cfg_.budgets[b]) &&
                        own->second <= fastest[b] * (1 + t_.cfg_.climb_band));
      s.climb_stopped = !near;
    }
  }
}

// The shapes a survivor's climb wants timed: its starting shapes (its probe shape, the accurate
// kernel's fastest, and for a combination each of its atoms' fastest) and the neighbours of its
// own fastest so far. Every shape when none it ran at so far ran; none once its climb stopped.
std::vector<WorkGroup> TuneStages::climb_shapes(const AppDescriptor &app, const std::string &id,
                                                const Tuner::State &s) const {
  if (s.climb_stopped) return {};
  std::vector<WorkGroup> shapes = {*s.probe};
  if (const auto b = fastest_swept(app, t_.base_id_)) shapes.push_back(b->first);
  if (s.origin == "combination")
    for (const AxisGroup g : all_groups()) {
      const std::string atom = variant_id(with_group(t_.base_, g, s.v));
      if (atom == t_.base_id_ || atom == id) continue;
      if (const auto b = fastest_swept(app, atom)) shapes.push_back(b->first);
    }
  if (const auto own = fastest_swept(app, id)) {
    const std::vector<WorkGroup> next = neighbour_shapes(t_.cfg_.shapes, own->first);
    shapes.insert(shapes.end(), next.begin(), next.end());
  } else {
    for (const auto &wg : t_.cfg_.shapes)
      if (t_.ledger_->find("sweep", app.name, id, shape_label(wg), t_.cfg_.train[0].name))
        return t_.cfg_.shapes;  // rows, none ok: every shape
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
