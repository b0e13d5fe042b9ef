// Error metrics of an approximate output against the accurate one (SPEC section 5).
#include "metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "parallel.hpp"

namespace kperf {

ErrorMetrics errors_from_sums(const ErrorSums& s, std::int64_t n_all) {
  ErrorMetrics e;
  e.nonfinite = s.nonfinite;
  e.mre_excluded = s.excluded;
  e.max_abs = s.max_abs;
  if (s.n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.mre = e.me = e.mae = e.psnr_db = e.max_abs = e.wrong_fraction = e.ssim = nan;
    return e;
  }
  e.wrong_fraction = static_cast<double>(s.wrong) / static_cast<double>(n_all);
  e.mre = s.n_rel > 0 ? s.rel / static_cast<double>(s.n_rel) : 0.0;
  e.mae = s.abs / static_cast<double>(s.n);
  const double range = s.max_t - s.min_t;
  e.me = range > 0 ? e.mae / range : e.mae;
  const double mse = s.sq / static_cast<double>(s.n);
  if (mse == 0)
    e.psnr_db = std::numeric_limits<double>::infinity();
  else if (range > 0)
    e.psnr_db = 10.0 * std::log10(range * range / mse);
  else
    e.psnr_db = -std::numeric_limits<double>::infinity();  // constant truth, some error
  return e;
}

ErrorMetrics compute_errors(const std::vector<double>& truth, const std::vector<float>& approx,
                            int width, int height, bool with_ssim) {
  if (truth.size() != approx.size() || truth.size() != static_cast<std::size_t>(width) * height)
    throw std::invalid_argument("compute_errors: size mismatch");
  const long n_all = static_cast<long>(truth.size());
  // Fixed chunks (independent of the core count), merged in order: reproducible sums.
  constexpr int kChunks = 16;
  struct Range {
    double max_t = -std::numeric_limits<double>::infinity();
    double min_t = std::numeric_limits<double>::infinity();
    double max_abs_t = 0;
    double max_abs_truth = 0;  // over every finite T, for the wrong-element threshold
  };
  std::vector<Range> ranges(kChunks);
  parallel_chunks(n_all, kChunks, [&](int c, long begin, long end) {
    Range& r = ranges[static_cast<std::size_t>(c)];
    for (long i = begin; i < end; ++i) {
      if (std::isfinite(truth[i])) r.max_abs_truth = std::max(r.max_abs_truth, std::fabs(truth[i]));
      if (!std::isfinite(truth[i]) || !std::isfinite(approx[i])) continue;
      r.max_t = std::max(r.max_t, truth[i]);
      r.min_t = std::min(r.min_t, truth[i]);
      r.max_abs_t = std::max(r.max_abs_t, std::fabs(truth[i]));
    }
  });
  Range all;
  for (const auto& r : ranges) {
    all.max_t = std::max(all.max_t, r.max_t);
    all.min_t = std::min(all.min_t, r.min_t);
    all.max_abs_t = std::max(all.max_abs_t, r.max_abs_t);
    all.max_abs_truth = std::max(all.max_abs_truth, r.max_abs_truth);
  }
  const double threshold = 1e-6 * all.max_abs_t;
  // Incorrect elements (a non-finite output where the truth is finite is wrong too), against
  // the largest finite |T| whatever the output holds.
  const double wrong_threshold = 1e-3 * std::max(1.0, all.max_abs_truth);
  struct Sums {
    double rel = 0, abs = 0, sq = 0, max_abs = 0;
    std::int64_t n = 0, n_rel = 0, excluded = 0, nonfinite = 0, wrong = 0;
  };
  std::vector<Sums> sums(kChunks);
  parallel_chunks(n_all, kChunks, [&](int c, long begin, long end) {
    Sums& s = sums[static_cast<std::size_t>(c)];
    for (long i = begin; i < end; ++i) {
      const double a = static_cast<double>(approx[i]);
      if (std::isfinite(truth[i]) && !(std::fabs(truth[i] - a) <= wrong_threshold)) ++s.wrong;
      if (!std::isfinite(truth[i]) || !std::isfinite(a)) {
        ++s.nonfinite;
        continue;
      }
      const double diff = std::fabs(truth[i] - a);
      ++s.n;
      s.abs += diff;
      s.sq += diff * diff;
      s.max_abs = std::max(s.max_abs, diff);
      if (std::fabs(truth[i]) > threshold) {
        s.rel += diff / std::fabs(truth[i]);
        ++s.n_rel;
      } else {
        ++s.excluded;
      }
    }
  });
  Sums t;
  for (const auto& s : sums) {
    t.rel += s.rel, t.abs += s.abs, t.sq += s.sq, t.max_abs = std::max(t.max_abs, s.max_abs);
    t.n += s.n, t.n_rel += s.n_rel, t.excluded += s.excluded, t.nonfinite += s.nonfinite;
    t.wrong += s.wrong;
  }
  ErrorSums all_sums;
  all_sums.max_t = all.max_t;
  all_sums.min_t = all.min_t;
  all_sums.rel = t.rel, all_sums.abs = t.abs, all_sums.sq = t.sq, all_sums.max_abs = t.max_abs;
  all_sums.n = t.n, all_sums.n_rel = t.n_rel, all_sums.excluded = t.excluded;
  all_sums.nonfinite = t.nonfinite, all_sums.wrong = t.wrong;
  ErrorMetrics e = errors_from_sums(all_sums, n_all);
  if (t.n == 0) return e;
  e.ssim = with_ssim ? mean_ssim(truth, approx, width, height)
                     : std::numeric_limits<double>::quiet_NaN();
  return e;
}

std::pair<double, double> ssim_constants(const std::vector<double>& truth) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double t : truth)
    if (std::isfinite(t)) lo = std::min(lo, t), hi = std::max(hi, t);
  const double range = hi > lo ? hi - lo : 1.0;
  return {(0.01 * range) * (0.01 * range), (0.03 * range) * (0.03 * range)};
}

std::array<double, 11> ssim_window() {
  std::array<double, 11> g;
  double sum = 0;
  for (int i = 0; i < 11; ++i) sum += g[i] = std::exp(-(i - 5) * (i - 5) / (2 * 1.5 * 1.5));
  for (double& v : g) v /= sum;
  return g;
}

double mean_ssim(const std::vector<double>& truth, const std::vector<float>& approx, int width,
                 int height) {
  const auto [c1, c2] = ssim_constants(truth);
  auto x_at = [&](std::size_t i) { return std::isfinite(truth[i]) ? truth[i] : 0.0; };
  auto y_at = [&](std::size_t i) {
    const double a = static_cast<double>(approx[i]);
    return std::isfinite(a) ? a : 0.0;
  };
  auto ssim_of = [&](double mx, double my, double xx, double yy, double xy) {
    const double vx = xx - mx * mx, vy = yy - my * my, cxy = xy - mx * my;
    return ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
  };
  constexpr int kWin = 11;
  if (width < kWin || height < kWin) {  // one window with uniform weights
    double m[5] = {0, 0, 0, 0, 0};
    const double n = static_cast<double>(truth.size());
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const double x = x_at(i), y = y_at(i);
      m[0] += x, m[1] += y, m[2] += x * x, m[3] += y * y, m[4] += x * y;
    }
    return ssim_of(m[0] / n, m[1] / n, m[2] / n, m[3] / n, m[4] / n);
  }
  const std::array<double, 11> g = ssim_window();
  // Separable filtering of the five maps (x, y, x^2, y^2, xy): each thread slides over its band
  // of output rows with a ring of the last 11 horizontally filtered input rows (small memory,
  // each input row filtered once per band).
  const int ow = width - kWin + 1, oh = height - kWin + 1;
  std::vector<double> row_sums(static_cast<std::size_t>(oh), 0.0);
  parallel_chunks(oh, host_threads(), [&](int, long begin, long end) {
    std::vector<double> ring(static_cast<std::size_t>(kWin) * ow * 5);
    auto filter_row = [&](int y) {
      double* dst = &ring[static_cast<std::size_t>(y % kWin) * ow * 5];
      for (int x = 0; x < ow; ++x) {
        double m[5] = {0, 0, 0, 0, 0};
        for (int k = 0; k < kWin; ++k) {
          const std::size_t i = static_cast<std::size_t>(y) * width + x + k;
          const double a = x_at(i), b = y_at(i);
          m[0] += g[k] * a, m[1] += g[k] * b, m[2] += g[k] * a * a, m[3] += g[k] * b * b,
              m[4] += g[k] * a * b;
        }
        std::copy(m, m + 5, dst + static_cast<std::size_t>(x) * 5);
      }
    };
    for (long y = begin; y < begin + kWin - 1; ++y) filter_row(static_cast<int>(y));
    for (long y = begin; y < end; ++y) {
      filter_row(static_cast<int>(y + kWin - 1));
      double acc = 0;
      for (int x = 0; x < ow; ++x) {
        double m[5] = {0, 0, 0, 0, 0};
        for (int k = 0; k < kWin; ++k) {
          const double* h = &ring[(static_cast<std::size_t>((y + k) % kWin) * ow + x) * 5];
          for (int c = 0; c < 5; ++c) m[c] += g[k] * h[c];
        }
        acc += ssim_of(m[0], m[1], m[2], m[3], m[4]);
      }
      row_sums[static_cast<std::size_t>(y)] = acc;
    }
  });
  double total = 0;
  for (double v : row_sums) total += v;
  return total / (static_cast<double>(ow) * oh);
}

namespace {

// JSON has no infinities or NaN, and a metric is a number or null (SPEC 15): where one is not
// finite it is null, and error.notes says why, in words that read it back.
constexpr const char* kNoFinitePair = "no element where both the truth and the output are finite";
constexpr const char* kSsimSkipped = "not computed: an error-only pass skips SSIM";
constexpr const char* kPsnrInfinite = "infinite: the output equals the truth";
constexpr const char* kPsnrNegative =
    "negative infinity: the truth is constant and the output differs from it";
constexpr const char* kNotFinite = "not finite";

// A metric's JSON value and, where it is null, why (nullptr for a number).
std::pair<nlohmann::ordered_json, const char*> number(const char* name, double v, bool no_pair) {
  if (std::isfinite(v)) return {v, nullptr};
  if (no_pair) return {nullptr, kNoFinitePair};
  if (std::string(name) == "ssim" && std::isnan(v)) return {nullptr, kSsimSkipped};
  if (std::string(name) == "psnr_db" && std::isinf(v))
    return {nullptr, v > 0 ? kPsnrInfinite : kPsnrNegative};
  return {nullptr, kNotFinite};
}

}  // namespace

// A metric read back: a number, null (NaN, or the infinity its note names), or the strings
// "nan", "inf", "-inf" that documents before SPEC 15 hold.
double read_number(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const double inf = std::numeric_limits<double>::infinity();
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "inf") return inf;
    if (s == "-inf") return -inf;
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::ordered_json to_json(const ErrorMetrics& e) {
  // mre is NaN only where no element pair was finite (errors_from_sums).
  const bool no_pair = std::isnan(e.mre);
  nlohmann::ordered_json j;
  nlohmann::ordered_json notes = nlohmann::ordered_json::object();
  auto put = [&](const char* name, double v) {
    auto [value, why] = number(name, v, no_pair);
    j[name] = value;
    if (why) notes[name] = why;
  };
  put("mre", e.mre);
  j["mre_excluded"] = e.mre_excluded;
  put("me", e.me);
  put("mae", e.mae);
  put("psnr_db", e.psnr_db);
  put("max_abs", e.max_abs);
  j["nonfinite"] = e.nonfinite;
  put("wrong_fraction", e.wrong_fraction);
  put("ssim", e.ssim);
  if (!notes.empty()) j["notes"] = notes;
  return j;
}

ErrorMetrics errors_from_json(const nlohmann::json& j) {
  const nlohmann::json notes = j.value("notes", nlohmann::json::object());
  auto read = [&](const char* name) {
    const double v = read_number(j.at(name));
    if (!j.at(name).is_null()) return v;
    const std::string why = notes.value(name, std::string());
    const double inf = std::numeric_limits<double>::infinity();
    return why == kPsnrInfinite ? inf : why == kPsnrNegative ? -inf : v;
  };
  ErrorMetrics e;
  e.mre = read("mre");
  e.mre_excluded = j.at("mre_excluded").get<std::int64_t>();
  e.me = read("me");
  e.mae = read("mae");
  e.psnr_db = read("psnr_db");
  e.max_abs = read("max_abs");
  e.nonfinite = j.value("nonfinite", std::int64_t{0});
  // Version-1 files have neither: NaN says "not measured".
  e.wrong_fraction = j.contains("wrong_fraction") ? read("wrong_fraction")
                                                  : std::numeric_limits<double>::quiet_NaN();
  e.ssim = j.contains("ssim") ? read("ssim") : std::numeric_limits<double>::quiet_NaN();
  return e;
}

}  // namespace kperf
