// The device's last-level cache, found by timing: the bandwidth of reading a buffer again and
// again drops once the buffer no longer fits. Drivers do not say (NVIDIA's reports 4 MB for a
// 50 MB L2), and where the cache holds a kernel's input and output, its timings measure the cache,
// not memory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"

namespace kperf {

// One size of the probe: a buffer's bytes, and the bandwidth of reading it again and again in
// one launch (the median of profiling-event times).
struct CacheProbePoint {
  std::uint64_t bytes = 0;
  double gbps = 0;
};

struct CacheProbe {
  std::vector<CacheProbePoint> points;  // ascending bytes
  // The buffer size up to which the reads ran at cache speed: where the bandwidth falls below the
  // midpoint between its peak and its value at the largest size (log-interpolated).
  // None where the two differ by less than kMinCacheGain (no cache effect to measure) or the
  // probe failed (`problem`).
  std::optional<std::uint64_t> cache_bytes;
  std::string problem;
  nlohmann::ordered_json to_json() const;
};

// The peak bandwidth must exceed the largest size's by this factor for a cache to count.
constexpr double kMinCacheGain = 1.3;

// The last-level cache from a probe's points (pure: what the probe does with its measurements).
std::optional<std::uint64_t> cache_bytes_of(const std::vector<CacheProbePoint>& points);

// The default grid side on a device whose last-level cache holds `cache_bytes`: the smallest of
// 2048, 4096, 8192 and 16384 whose float input alone is larger than the cache and whose input and
// output fit in a quarter of `memory_bytes` (else the largest that fits). None where the cache does
// not hold a `default_side`^2 grid's input and output: that grid already measures memory.
std::optional<int> memory_bound_side(std::uint64_t cache_bytes, std::uint64_t memory_bytes,
                                     int default_side = 512);

// Reads buffers of 1 MiB to `max_bytes` (within a quarter of the device's memory and its largest
// allocation) in steps of sqrt(2), each whole and again from a shifted start until `read_bytes` are
// read in one launch (kernels/cache_probe.cl from `kernel_root`), so that a launch's own cost
// vanishes: a buffer the last-level cache holds is read at the cache's bandwidth, a larger one at
// memory's. Failures are the result's problem, never exceptions.
CacheProbe probe_last_level_cache(ClEnv& env, const std::string& kernel_root,
                                  std::uint64_t max_bytes = std::uint64_t{1} << 30,
                                  std::uint64_t read_bytes = std::uint64_t{1} << 30);

// The probe of this command's device, made once per command: the first process on a GPU probes
// and leaves the answer in the scratch directory, which the processes it starts (a supervisor's
// children, a tune's stage workers) read instead of probing again. A CPU device is not probed (its
// caches are the host's, and --size and --cold keep their fixed rules there): the result has no
// points and says so.
const CacheProbe& command_cache_probe(ClEnv& env, const std::string& kernel_root);

}  // namespace kperf
