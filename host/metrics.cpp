// Error metrics of an approximate output against the accurate one (SPEC section 5).
#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kperf {

ErrorMetrics compute_errors(const std::vector<double>& truth, const std::vector<float>& approx) {
  if (truth.size() != approx.size()) throw std::invalid_argument("compute_errors: size mismatch");
  ErrorMetrics e;
  double max_t = -std::numeric_limits<double>::infinity();
  double min_t = std::numeric_limits<double>::infinity();
  double max_abs_t = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (!std::isfinite(truth[i]) || !std::isfinite(approx[i])) continue;
    max_t = std::max(max_t, truth[i]);
    min_t = std::min(min_t, truth[i]);
    max_abs_t = std::max(max_abs_t, std::fabs(truth[i]));
  }
  const double threshold = 1e-6 * max_abs_t;
  double sum_rel = 0, sum_abs = 0, sum_sq = 0;
  std::int64_t n = 0, n_rel = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (!std::isfinite(truth[i]) || !std::isfinite(approx[i])) {
      ++e.nonfinite;
      continue;
    }
    const double diff = std::fabs(truth[i] - static_cast<double>(approx[i]));
    ++n;
    sum_abs += diff;
    sum_sq += diff * diff;
    e.max_abs = std::max(e.max_abs, diff);
    if (std::fabs(truth[i]) > threshold) {
      sum_rel += diff / std::fabs(truth[i]);
      ++n_rel;
    } else {
      ++e.mre_excluded;
    }
  }
  if (n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.mre = e.me = e.mae = e.psnr_db = e.max_abs = nan;
    return e;
  }
  e.mre = n_rel > 0 ? sum_rel / static_cast<double>(n_rel) : 0.0;
  e.mae = sum_abs / static_cast<double>(n);
  const double range = max_t - min_t;
  e.me = range > 0 ? e.mae / range : e.mae;
  const double mse = sum_sq / static_cast<double>(n);
  if (mse == 0)
    e.psnr_db = std::numeric_limits<double>::infinity();
  else if (range > 0)
    e.psnr_db = 10.0 * std::log10(range * range / mse);
  else
    e.psnr_db = -std::numeric_limits<double>::infinity();  // constant truth, some error
  return e;
}

namespace {

// JSON has no infinities or NaN: they are written as the strings "inf", "-inf", "nan".
nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double read_number(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  return j.get<double>();
}

}  // namespace

nlohmann::ordered_json to_json(const ErrorMetrics& e) {
  return {{"mre", number(e.mre)},         {"mre_excluded", e.mre_excluded},
          {"me", number(e.me)},           {"mae", number(e.mae)},
          {"psnr_db", number(e.psnr_db)}, {"max_abs", number(e.max_abs)},
          {"nonfinite", e.nonfinite}};
}

ErrorMetrics errors_from_json(const nlohmann::json& j) {
  ErrorMetrics e;
  e.mre = read_number(j.at("mre"));
  e.mre_excluded = j.at("mre_excluded").get<std::int64_t>();
  e.me = read_number(j.at("me"));
  e.mae = read_number(j.at("mae"));
  e.psnr_db = read_number(j.at("psnr_db"));
  e.max_abs = read_number(j.at("max_abs"));
  e.nonfinite = j.value("nonfinite", std::int64_t{0});
  return e;
}

}  // namespace kperf
