// --shard I/N: a deterministic partition of a run's configurations, the same on every machine,
// so that N processes (a Slurm array, the GPUs of a host) measure one run between them.
#pragma once

#include <string>
#include <vector>

namespace kperf {

struct ShardSpec {
  int index = 0, count = 1;
  bool active() const { return count > 1 || index != 0; }
};
// "I/N" with 0 <= I < N; throws std::invalid_argument naming the problem.
ShardSpec parse_shard(const std::string& text);

// A unit of the partition: every launch shape, input and size of one app's variant
// ("app/variant id"), so that a variant's best shape is found within one shard. `cost` is its
// expected time (shapes x pixels). A baseline unit (an accurate kernel that speedups are taken
// against) is measured again, as a copy, by every other shard that holds a unit of its `app`.
struct ShardUnit {
  std::string id;
  double cost = 0;
  std::string app;
  bool baseline = false;
};
// The shard of every unit (in the order given). Whole apps first, the costliest first, each to
// the least loaded shard (ties to the lowest index), so that an app's units stay with its
// baselines; then, while it lowers the larger of the two loads, a unit (not a baseline) moves
// from the most to the least loaded shard, which pays for the baseline copies it takes on.
// Deterministic: apps and units of equal cost go in name order.
std::vector<int> assign_shards(const std::vector<ShardUnit>& units, int count);

}  // namespace kperf
