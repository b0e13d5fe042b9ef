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
  double wrong_fraction = 0;      // elements with |T - A| > 1e-3 max(1, max|T|) (SPEC 10)
  double ssim = 1;                // mean SSIM (SPEC 10)
  double value(Metric m) const { return m == Metric::kMre ? mre : me; }
};

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

nlohmann::ordered_json to_json(const ErrorMetrics& e);
ErrorMetrics errors_from_json(const nlohmann::json& j);

}  // namespace kperf
