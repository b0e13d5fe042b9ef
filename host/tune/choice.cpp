// The tuner's judgements (choice.hpp).
#include "choice.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace kperf {

std::vector<std::size_t> finalist_indices(const std::vector<FrontPoint>& points, double budget) {
  std::vector<std::size_t> within;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].error <= budget) within.push_back(i);
  std::stable_sort(within.begin(), within.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].time < points[b].time; });
  std::vector<std::size_t> out;
  for (std::size_t i : within)
    if (out.size() < TuneConfig::kMaxFinalists &&
        points[i].time <= points[within.front()].time * (1 + TuneConfig::kFinalistBand))
      out.push_back(i);
  return out;
}

void add_held_out_verdict(nlohmann::ordered_json& choice, const std::vector<HeldOutError>& errors,
                          const std::string& problem, double budget, double percentile_p,
                          bool exact) {
  if (!problem.empty() || errors.empty()) {
    const std::string why = problem.empty() ? "no held-out input" : problem;
    choice["test"] = {{"problem", why}};
    choice["holds"] = nullptr;
    choice["verdict"] = "unmeasured: " + why;
    return;
  }
  std::vector<double> values;
  nlohmann::ordered_json per = nlohmann::ordered_json::object();
  for (const HeldOutError& e : errors) {
    values.push_back(e.error);
    per[e.input] = {{"error", e.error}, {"output_file", e.output_file}, {"key", e.key}};
  }
  const double p = percentile(values, percentile_p);
  const double mx = *std::max_element(values.begin(), values.end());
  choice["test"] = {{"errors", per},
                    {"mean", std::accumulate(values.begin(), values.end(), 0.0) /
                                 static_cast<double>(values.size())},
                    {"percentile_error", p},
                    {"max", mx}};
  choice["holds"] = p <= budget;
  choice["max_within_budget"] = mx <= budget;
  char text[256];
  std::snprintf(text, sizeof text, "%s: test p%g error %.4g %% %s the %.4g %% budget (max %.4g %%)",
                exact ? "no approximation within the budget beats the accurate kernel; accurate "
                        "chosen"
                      : "approximation chosen",
                percentile_p, 100 * p, p <= budget ? "within" : "ABOVE", 100 * budget, 100 * mx);
  choice["verdict"] = text;
}

void add_broken_truth_verdict(nlohmann::ordered_json& choice, const std::string& input,
                              const std::string& reason) {
  choice["holds"] = nullptr;
  choice["verdict"] = "unmeasured: reference_failed on " + input + ": " + reason;
}

}  // namespace kperf
