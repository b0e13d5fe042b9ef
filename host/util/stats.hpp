// Summary statistics of integer-nanosecond timing samples (SPEC section 6).
#pragma once

#include <cstdint>
#include <vector>

namespace kperf {

struct TimingStats {
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0, cv = 0;  // nanoseconds; cv = sd/mean
};

// Median of an even count is the mean of the two middle samples; stddev is the sample
// standard deviation (n - 1), 0 for a single sample. Throws on an empty vector.
TimingStats summarize(const std::vector<std::uint64_t>& samples_ns);

}  // namespace kperf
