// Summary statistics of integer-nanosecond timing samples (SPEC section 6).
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kperf {

TimingStats summarize(const std::vector<std::uint64_t>& samples_ns) {
  if (samples_ns.empty()) throw std::invalid_argument("summarize: no samples");
  std::vector<std::uint64_t> sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  TimingStats s;
  s.min = static_cast<double>(sorted.front());
  s.max = static_cast<double>(sorted.back());
  s.median =
      n % 2 ? static_cast<double>(sorted[n / 2])
            : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
  long double sum = 0;
  for (auto v : sorted) sum += v;
  s.mean = static_cast<double>(sum / n);
  if (n > 1) {
    long double sq = 0;
    for (auto v : sorted) sq += (v - sum / n) * (v - sum / n);
    s.stddev = static_cast<double>(std::sqrt(sq / (n - 1)));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

}  // namespace kperf
