// Error metrics of an approximate output against the accurate one (SPEC section 5).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps.hpp"

namespace kperf {

struct ErrorMetrics {
  double mre = 0;                 // mean relative error over |T| > 1e-6 max|T|
  std::int64_t mre_excluded = 0;  // elements left out of mre for a near-zero truth
  double me = 0;                  // mean absolute error over the truth's range
  double mae = 0;                 // mean absolute error
  double psnr_db = 0;             // +inf when identical
  double max_abs = 0;
  std::int64_t nonfinite = 0;     // elements skipped because T or A is NaN/Inf
  double value(Metric m) const { return m == Metric::kMre ? mre : me; }
};

ErrorMetrics compute_errors(const std::vector<double>& truth, const std::vector<float>& approx);

nlohmann::ordered_json to_json(const ErrorMetrics& e);
ErrorMetrics errors_from_json(const nlohmann::json& j);

}  // namespace kperf
