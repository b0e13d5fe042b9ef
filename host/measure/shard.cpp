// The deterministic, cost-balanced partition behind --shard (shard.hpp).
#include "shard.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace kperf {

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& part, long& out) {
    char* end = nullptr;
    errno = 0;
    out = std::strtol(part.c_str(), &end, 10);
    return !part.empty() && *end == '\0' && errno == 0;
  };
  long i = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), i) ||
      !number(text.substr(slash + 1), n))
    throw std::invalid_argument("invalid --shard '" + text + "' (expected I/N, e.g. 0/4)");
  if (n < 1 || n > 100000)
    throw std::invalid_argument("invalid --shard '" + text + "': N must be in 1..100000");
  if (i < 0 || i >= n)
    throw std::invalid_argument("invalid --shard '" + text + "': I must be in 0.." +
                                std::to_string(n - 1));
  return {static_cast<int>(i), static_cast<int>(n)};
}

std::vector<int> assign_shards(const std::vector<ShardUnit>& units, int count) {
  const std::size_t shards = static_cast<std::size_t>(count);
  std::map<std::string, double> app_cost, baseline_cost;
  for (const auto& u : units) {
    app_cost[u.app] += u.cost;
    if (u.baseline) baseline_cost[u.app] += u.cost;
  }
  std::vector<std::string> apps;
  for (const auto& [app, cost] : app_cost) apps.push_back(app);
  std::stable_sort(apps.begin(), apps.end(), [&](const std::string& a, const std::string& b) {
    return app_cost[a] > app_cost[b];
  });
  std::vector<double> load(shards, 0.0);
  std::map<std::string, std::size_t> home;
  for (const auto& app : apps) {
    const std::size_t s =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    home[app] = s;
    load[s] += app_cost[app];
  }
  std::vector<int> shard(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) shard[i] = static_cast<int>(home[units[i].app]);

  // Movable units, the largest first; a shard that holds units of an app away from its home
  // measures the app's baselines once more.
  std::vector<std::size_t> movable;
  for (std::size_t i = 0; i < units.size(); ++i)
    if (!units[i].baseline) movable.push_back(i);
  std::sort(movable.begin(), movable.end(), [&](std::size_t a, std::size_t b) {
    if (units[a].cost != units[b].cost) return units[a].cost > units[b].cost;
    return units[a].id < units[b].id;
  });
  std::set<std::pair<std::string, std::size_t>> copies;
  for (std::size_t step = 0; step < units.size() * shards; ++step) {
    const std::size_t hi =
        static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
    const std::size_t lo =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    bool moved = false;
    for (std::size_t i : movable) {
      if (static_cast<std::size_t>(shard[i]) != hi) continue;
      const ShardUnit& u = units[i];
      const double copy =
          lo == home[u.app] || copies.count({u.app, lo}) ? 0.0 : baseline_cost[u.app];
      if (load[lo] + u.cost + copy >= load[hi]) continue;
      load[hi] -= u.cost;
      load[lo] += u.cost + copy;
      copies.insert({u.app, lo});
      shard[i] = static_cast<int>(lo);
      moved = true;
      break;
    }
    if (!moved) break;
  }
  return shard;
}

}  // namespace kperf
