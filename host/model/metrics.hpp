// Error metrics of an approximate output against the accurate one (SPEC section 5).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "apps.hpp"

namespace kperf {

struct ErrorMetrics {
  double mre = 0;                 // mean relative error over |T| > 1e-6 max|T|
  std::int64_t mre_excluded = 0;  // elements left out of mre for a near-zero truth
  double me = 0;                  // mean absolute error over the truth's range
  double mae = 0;                 // mean absolute error
  double psnr_db = 0;             // +inf when identical
  double max_abs = 0;
  std::int64_t nonfinite = 0;  // elements skipped because T or A is NaN/Inf
  double wrong_fraction = 0;   // elements with |T - A| > 1e-3 max(1, max|T|) (SPEC 10)
  double ssim = 1;             // mean SSIM (SPEC 10)
  double value(Metric m) const { return m == Metric::kMre ? mre : me; }
};

// The reductions every metric but SSIM follows from: the truth's range over the elements where
// truth and output are finite, and the sums and counts of the differences there.
struct ErrorSums {
  double max_t = 0, min_t = 0, rel = 0, abs = 0, sq = 0, max_abs = 0;
  std::int64_t n = 0, n_rel = 0, excluded = 0, nonfinite = 0, wrong = 0;
};
// The metrics of SPEC 5 and 10 from those sums over n_all elements (SSIM left at its default).
ErrorMetrics errors_from_sums(const ErrorSums& sums, std::int64_t n_all);

// Every metric of SPEC sections 5 and 10 for width x height grids (row-major). Without
// `with_ssim` the SSIM (by far the costliest) is left NaN: for error-only passes that need the
// primary metric alone.
ErrorMetrics compute_errors(const std::vector<double>& truth, const std::vector<float>& approx,
                            int width, int height, bool with_ssim = true);

// Mean SSIM (Wang et al. 2004): 11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03, dynamic
// range L = max T - min T (1 when T is constant), over the positions where the whole window fits
// in the grid ("valid", as Wang's reference code); a grid smaller than the window is one window
// of its own size with uniform weights. Non-finite elements count as 0. Threads split the rows.
double mean_ssim(const std::vector<double>& truth, const std::vector<float>& approx, int width,
                 int height);
// SSIM's constants (K1 L)^2 and (K2 L)^2 for this truth, and its window's 11 normalised weights.
std::pair<double, double> ssim_constants(const std::vector<double>& truth);
std::array<double, 11> ssim_window();

nlohmann::ordered_json to_json(const ErrorMetrics& e);
ErrorMetrics errors_from_json(const nlohmann::json& j);
// A number read back from a document: a number, null (NaN), or the strings "nan", "inf", "-inf"
// that documents before SPEC 15 hold.
double read_number(const nlohmann::json& j);
// A number as a document writes it: itself where finite, else null (JSON has no NaN).
inline nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace kperf
