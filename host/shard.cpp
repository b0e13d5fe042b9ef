// The deterministic, cost-balanced partition behind --shard (shard.hpp).
#include "shard.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <numeric>
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
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (units[a].cost != units[b].cost) return units[a].cost > units[b].cost;
    return units[a].id < units[b].id;
  });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<int> shard(units.size(), 0);
  for (std::size_t u : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    shard[u] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += units[u].cost;
  }
  return shard;
}

}  // namespace kperf
