// The device's last-level cache, found by timing: the bandwidth of back-to-back copies drops once
// what one copy touches no longer fits. Drivers do not say (NVIDIA's reports 4 MB for a 50 MB L2),
// and where the cache holds a kernel's input and output, its timings measure the cache, not memory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"

namespace kperf {

// One size of the probe: the bytes a copy reads plus writes, and its bandwidth over them (warm,
// back-to-back launches, the median of profiling-event times).
struct CacheProbePoint {
  std::uint64_t bytes = 0;
  double gbps = 0;
};

struct CacheProbe {
  std::vector<CacheProbePoint> points;  // ascending bytes
  // The footprint up to which the copies ran at cache speed: the largest probed size whose
  // bandwidth is still above the midpoint between the peak and the bandwidth at the largest size.
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

// Times float4 copies whose footprint (bytes read plus written) runs from 1 MiB to `max_bytes`
// in steps of sqrt(2), within a quarter of the device's memory and its largest allocation, with
// kernels/copy.cl from `kernel_root`. Failures are the result's problem, never exceptions.
CacheProbe probe_last_level_cache(ClEnv& env, const std::string& kernel_root,
                                  std::uint64_t max_bytes = std::uint64_t{1} << 30);

}  // namespace kperf
