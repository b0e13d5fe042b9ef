// The Pareto front of (time, error) points, and the combinations of atoms it proposes (tune.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tune.hpp"

namespace kperf {

std::vector<std::size_t> pareto_indices(const std::vector<FrontPoint> &points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // By time, then error, then first seen: a sweep keeps a point only when it
  // lowers the error.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].time != points[b].time) return points[a].time < points[b].time;
    return points[a].error < points[b].error;
  });
  std::vector<std::size_t> front;
  double best_error = std::numeric_limits<double>::infinity();
  for (std::size_t i : order)
    if (points[i].error < best_error) {
      front.push_back(i);
      best_error = points[i].error;
    }
  return front;
}

std::vector<std::size_t> near_front_indices(const std::vector<FrontPoint> &points, double band) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool beaten = false;
    for (std::size_t j = 0; j < points.size() && !beaten; ++j)
      beaten = j != i && points[j].error <= points[i].error &&
               points[j].time * (1 + band) < points[i].time;
    if (!beaten) out.push_back(i);
  }
  return out;
}

std::vector<Combination> propose_combinations(const std::vector<AtomStanding> &atoms,
                                              double base_time, double max_error,
                                              std::size_t limit) {
  if (base_time <= 0) return {};
  const Variant base = default_variant();
  const std::string base_id = variant_id(base);
  // Per group, the front of its atoms and those near it; the default value (no change, ratio 1,
  // error 0) always takes part so that a combination may leave a group alone.
  struct Member {
    Variant donor;
    double ratio, error;
    bool is_default;
  };
  std::map<AxisGroup, std::vector<Member>> fronts;
  for (AxisGroup g : all_groups()) {
    std::vector<const AtomStanding *> members;
    std::vector<FrontPoint> points;
    for (const auto &a : atoms)
      if (a.group == g && variant_id(a.variant) != base_id) {
        members.push_back(&a);
        points.push_back({a.time, a.error});
      }
    std::vector<Member> &front = fronts[g];
    front.push_back({base, 1.0, 0.0, true});
    for (std::size_t i : near_front_indices(points, TuneConfig::kFrontBand))
      front.push_back(
          {members[i]->variant, members[i]->time / base_time, members[i]->error, false});
  }
  std::vector<Combination> out;
  std::set<std::string> seen;
  // Walk the cross product of the fronts with an odometer over the groups.
  std::vector<AxisGroup> groups;
  for (const auto &[g, f] : fronts) groups.push_back(g);
  std::vector<std::size_t> digit(groups.size(), 0);
  while (true) {
    Variant v = base;
    double ratio = 1, error = 0;
    int changed = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const Member &m = fronts[groups[i]][digit[i]];
      if (m.is_default) continue;
      v = with_group(v, groups[i], m.donor);
      ratio *= m.ratio;
      error += m.error;
      ++changed;
    }
    if (changed >= 2 && error <= max_error && seen.insert(variant_id(v)).second)
      out.push_back({v, base_time * ratio, error});
    std::size_t i = 0;
    while (i < groups.size() && ++digit[i] == fronts[groups[i]].size()) digit[i++] = 0;
    if (i == groups.size()) break;
  }
  std::stable_sort(out.begin(), out.end(), [](const Combination &a, const Combination &b) {
    return a.predicted_time < b.predicted_time;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace kperf
