// Split-conformal calibration of the canary's margin (canary_calibration.hpp), and the app
// tuner's pairs of rung and training input it is computed from.
#include "canary_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "inputs.hpp"
#include "select_device.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

namespace kperf {

using namespace tune_detail;

namespace {

using Json = nlohmann::ordered_json;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool covered(const CanaryCalibration::Pair& p, double scale) {
  return p.error <= p.estimate + calibrated_margin(p.margin, scale);
}

}  // namespace

ConformalScale conformal_scale(std::vector<double> scores, double confidence) {
  ConformalScale c;
  c.n = scores.size();
  // ceil((n + 1) x confidence), the product rounded first so that 20 x 0.95 is 19, not 20.
  const double product = static_cast<double>(c.n + 1) * confidence;
  c.index = static_cast<std::size_t>(std::ceil(product - 1e-9 * product));
  c.index = std::max<std::size_t>(c.index, 1);
  if (c.index > c.n) {
    c.score = c.scale = kInfinity;
    return c;
  }
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(c.index - 1),
                   scores.end());
  c.score = scores[c.index - 1];
  c.scale = std::max(1.0, c.score);
  return c;
}

double calibrated_margin(double raw, double scale) {
  if (std::isnan(raw) || raw == 0) return raw;
  return std::isinf(scale) ? kInfinity : raw * scale;
}

void CanaryCalibration::add(Pair p) {
  if (!std::isfinite(p.estimate))
    skip("no finite estimate (the canary's truth is not finite there)");
  else if (!std::isfinite(p.error))
    skip("no finite error on the training input");
  else if (p.margin == 0)
    skip("margin 0: the canary sampled every window, its estimate is the error");
  else if (!(p.margin > 0) || !std::isfinite(p.margin))
    skip("margin not finite: the sample carries no information, the rung is refused anyway");
  else
    pairs_.push_back(std::move(p));
}

ConformalScale CanaryCalibration::result(double confidence) const {
  std::vector<double> scores;
  for (const Pair& p : pairs_) scores.push_back((p.error - p.estimate) / p.margin);
  return conformal_scale(std::move(scores), confidence);
}

Json CanaryCalibration::json(const std::vector<std::string>& inputs, double confidence) const {
  const ConformalScale c = result(confidence);
  std::size_t skipped = 0, raw = 0, scaled = 0;
  for (const auto& [reason, count] : skipped_) skipped += count;
  Json estimates = Json::array();
  for (const Pair& p : pairs_) {
    raw += covered(p, 1);
    scaled += covered(p, c.scale);
    estimates.push_back({{"rung", p.rung},
                         {"input", p.input},
                         {"where", p.where},
                         {"estimate", p.estimate},
                         {"margin", number_or_null(calibrated_margin(p.margin, c.scale))},
                         {"raw_margin", p.margin},
                         {"error", p.error},
                         {"score", (p.error - p.estimate) / p.margin}});
  }
  auto share = [&](std::size_t k) {
    return number_or_null(pairs_.empty() ? NAN : static_cast<double>(k) / pairs_.size());
  };
  Json block = {
      {"method",
       "split conformal on the training inputs: for every rung of the app's ladders (the accurate "
       "one aside) and every training input, the canary's estimate and margin there (as the walks "
       "compute them: the device canary for the rungs it takes) and the rung's true error at its "
       "own shape (the probe or confirm stage's row); scores (error - estimate) / margin over the "
       "pairs with finite numbers and a positive margin; k the ceil((n + 1) x confidence)-th "
       "smallest of the n scores, infinite when that index exceeds n; every held-out margin is "
       "the canary's times scale = max(1, k) (raw_margin: the canary's own; a margin of 0 stays "
       "0), so it is never narrower"},
      {"inputs", inputs},
      {"pairs", c.n},
      {"skipped", skipped},
      {"skipped_reasons", skipped_},
      {"confidence", confidence},
      {"quantile_index", c.index},
      {"score_at_quantile", number_or_null(c.score)},
      {"scale", number_or_null(c.scale)}};
  if (std::isinf(c.scale))
    block["refused"] = "every rung refused (a margin of 0 aside): " + std::to_string(c.n) +
                       " scores, fewer than the quantile index " + std::to_string(c.index) +
                       " needs at this confidence; more training inputs or rungs would calibrate";
  block["training_coverage_raw"] = share(raw);
  block["training_coverage"] = share(scaled);
  block["estimates"] = estimates;
  return block;
}

double TuneReport::calibrate_canary(const AppDescriptor& app,
                                    const std::map<std::string, LadderRung>& rungs, CanaryInput in,
                                    SelectDeviceCanary* device, Json& block) const {
  CanaryCalibration cal;
  std::vector<std::string> names;
  std::string device_problem;
  for (const auto& src : t_.cfg_.train) {
    names.push_back(src.name);
    const Grid grid = load_image_source(src, t_.cfg_.size);
    in.name = src.name;
    in.grid = &grid;
    DeviceEstimates d;
    if (device && device_problem.empty()) try {
        d = device->estimate(in, rungs, {});
      } catch (const std::exception& e) {
        // As in the walks: this input and the later ones take the host canary.
        device_problem = "on " + src.name + ": " + e.what() + "; the host canary from it on";
      }
    InputCanary canary = in.make();
    for (const auto& [label, r] : rungs) {
      if (r.exact) continue;
      if (r.faulted) {
        cal.skip("the rung faulted the device on a held-out input (never picked)");
        continue;
      }
      const std::string id = r.stages[0].variant.id(), shape = shape_label(r.stages[0].wg);
      const TuneRow* t = t_.ledger_->find("probe", app.name, id, shape, src.name);
      if (!t) t = t_.ledger_->find("confirm", app.name, id, shape, src.name);
      if (!t || !t->row.ok() || !t->row.error) {
        cal.skip(t ? std::string(status_name(t->row.status)) + " on a training input"
                   : "no training row at the rung's shape");
        continue;
      }
      const auto on_device = d.by_label.find(label);
      const bool dev = on_device != d.by_label.end();
      const CanaryEstimate e = dev ? on_device->second : canary.estimate(r.stages);
      cal.add({label, src.name, dev ? "device" : "host", e.estimate, e.margin,
               t->row.error->value(app.primary_metric)});
    }
  }
  block = cal.json(names, in.settings.confidence);
  if (!device_problem.empty()) block["device_problem"] = device_problem;
  return cal.result(in.settings.confidence).scale;
}

}  // namespace kperf
