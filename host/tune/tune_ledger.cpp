// kperf tune's ledger (tune_ledger.hpp).
#include "tune_ledger.hpp"

#include <algorithm>
#include <cmath>

#include "tune_internal.hpp"

namespace kperf {

using namespace tune_detail;

namespace {

bool is_baseline_stage(const std::string &stage) { return stage.rfind("sweep-baseline:", 0) == 0; }

std::string index_key(const std::string &stage, const std::string &app, const std::string &id,
                      const std::string &shape, const std::string &input, int device) {
  // A baseline stage holds the accurate kernel once per device; every other stage measures a
  // configuration on one device only.
  return stage + "|" + app + "|" + id + "|" + shape + "|" + input +
         (is_baseline_stage(stage) ? "|" + std::to_string(device) : std::string());
}

}  // namespace

TuneLedger::TuneLedger(const TuneConfig &cfg, std::vector<TuneRow> rows) : cfg_(cfg) {
  for (TuneRow &r : rows) add(std::move(r));
}

const TuneRow &TuneLedger::add(TuneRow row) {
  rows_.push_back(std::move(row));
  const TuneRow &t = rows_.back();
  const ResultRow &r = t.row;
  index_[index_key(t.stage, r.app, variant_id(r), wg_label(r.wg_x, r.wg_y, r.vec, r.py),
                   r.input_name, t.device)] = rows_.size() - 1;
  return t;
}

const TuneRow *TuneLedger::find(const std::string &stage, const std::string &app,
                                const std::string &id, const std::string &shape,
                                const std::string &input, int device) const {
  const auto it = index_.find(index_key(stage, app, id, shape, input, device));
  return it == index_.end() ? nullptr : &rows_[it->second];
}

std::optional<TimingStats> TuneLedger::raw_objective_time(const ResultRow &row) const {
  if (cfg_.energy_objective) {
    if (!row.energy.is_object()) return std::nullopt;
    // Nanojoules per launch in the time's place; the spread over windows in the cv's.
    TimingStats s;
    s.median = s.mean = 1e9 * row.energy.value("j_per_launch", 0.0);
    s.min = 1e9 * row.energy.value("j_per_launch_min", 0.0);
    s.max = 1e9 * row.energy.value("j_per_launch_max", 0.0);
    s.cv = s.median > 0 ? (s.max - s.min) / s.median : 0;
    return s;
  }
  if (!cfg_.end_to_end) return row.time;
  if (row.transfer_samples.empty()) return std::nullopt;
  return summarize(row.transfer_samples.end_to_end);
}

std::optional<TimingStats> TuneLedger::objective_time(const TuneRow &row) const {
  std::optional<TimingStats> t = raw_objective_time(row.row);
  if (!t) return t;
  const std::optional<double> scale = device_scale(row);
  if (!scale) return std::nullopt;
  for (double *v : {&t->median, &t->mean, &t->min, &t->max}) *v *= *scale;
  return t;
}

// The fastest ok time of the accurate kernel in a stage's rows of one device, over the shapes.
std::optional<double> TuneLedger::best_baseline(const std::string &stage, const std::string &app,
                                                int device) const {
  std::optional<double> best;
  for (const auto &wg : cfg_.shapes) {
    const TuneRow *r = find(stage, app, base_id_, shape_label(wg), cfg_.train[0].name, device);
    if (!r || !r->row.ok()) continue;
    if (const auto t = raw_objective_time(r->row); t && (!best || t->median < *best))
      best = t->median;
  }
  return best;
}

std::optional<double> TuneLedger::device_scale(const TuneRow &row) const {
  const bool screen = row.stage == "screen";
  if ((row.stage != "sweep" && !screen) || row.device == home_device(row.row.app)) return 1.0;
  // The accurate kernel is always swept on the app's home device; another device times it again in
  // each timed stage it takes part in (the atoms' or the combinations'). The scale is the median
  // over the shapes of the first device's time over this one's: near the launch floor one
  // shape's time can be 10 % off, and a scale from the best shapes alone would carry that error
  // into every row of the device.
  const bool combination = combinations_.count(row.row.app + "|" + variant_id(row.row)) > 0;
  const std::string own_stage =
      screen ? "screen-baseline"
             : std::string("sweep-baseline:") + (combination ? "combination" : "atom");
  std::vector<double> ratios;
  for (const auto &wg : cfg_.shapes) {
    const std::string shape = shape_label(wg), input = cfg_.train[0].name;
    const TuneRow *first = find("sweep", row.row.app, base_id_, shape, input);
    const TuneRow *own = find(own_stage, row.row.app, base_id_, shape, input, row.device);
    if (!first || !own || !first->row.ok() || !own->row.ok()) continue;
    const auto t_first = raw_objective_time(first->row), t_own = raw_objective_time(own->row);
    if (t_first && t_own && t_first->median > 0 && t_own->median > 0)
      ratios.push_back(t_first->median / t_own->median);
  }
  if (ratios.empty()) return std::nullopt;
  return percentile(ratios, 50);
}

bool TuneLedger::apps_have_homes() const {
  return cfg_.multi_device() && cfg_.apps.size() >= 1 + cfg_.worker_devices.size();
}

int TuneLedger::home_device(const std::string &app) const {
  if (!apps_have_homes()) return 0;
  for (std::size_t i = 0; i < cfg_.apps.size(); ++i)
    if (cfg_.apps[i]->name == app) return static_cast<int>(i % (1 + cfg_.worker_devices.size()));
  return 0;
}

std::optional<double> TuneLedger::rank_time(const std::string &app, const std::string &id,
                                            const WorkGroup &wg) const {
  const TuneRow *r = find("rank", app, id, shape_label(wg), cfg_.train[0].name);
  if (!r || !r->row.ok()) return std::nullopt;
  const std::optional<TimingStats> t = raw_objective_time(r->row);
  if (!t || !(t->median > 0)) return std::nullopt;
  return t->median;
}

// The training errors of a variant at one shape (from one stage's rows), or why there are none.
std::vector<double> TuneLedger::train_errors(const std::string &stage, const AppDescriptor &app,
                                             const Variant &v, const WorkGroup &wg,
                                             std::string &problem) const {
  std::vector<double> errors;
  for (const auto &src : cfg_.train) {
    const TuneRow *found = find(stage, app.name, variant_id(v), shape_label(wg), src.name);
    const ResultRow *r = found ? &found->row : nullptr;
    if (!r) {
      problem = "not measured on " + src.name;
      return errors;
    }
    if (!r->ok() || !r->error) {
      problem = std::string(status_name(r->status)) + " on " + src.name + ": " + r->reason;
      return errors;
    }
    // A relaxed barrier races: its error is the worst of several launches.
    double e = r->error->value(app.primary_metric);
    for (double rep : r->error_reps) e = std::max(e, rep);
    if (!std::isfinite(e)) {
      problem = "non-finite error on " + src.name;
      return errors;
    }
    errors.push_back(e);
  }
  return errors;
}

}  // namespace kperf
