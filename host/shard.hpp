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
// expected time (shapes x pixels).
struct ShardUnit {
  std::string id;
  double cost = 0;
};
// The shard of every unit (in the order given): the longest first, each to the least loaded
// shard so far (ties to the lowest index); units of equal cost in id order.
std::vector<int> assign_shards(const std::vector<ShardUnit>& units, int count);

}  // namespace kperf
