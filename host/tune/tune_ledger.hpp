// kperf tune's ledger: every row its stages measured, found by stage, app, variant, shape, input
// and device, and what the search reads off them: a row's time under the objective on the first
// device's scale, the baselines, the rank stage's times, a variant's training errors.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stats.hpp"
#include "tune.hpp"

namespace kperf {

class TuneLedger {
 public:
  TuneLedger(const TuneConfig& cfg, std::vector<TuneRow> rows);
  const std::vector<TuneRow>& rows() const { return rows_; }
  const TuneRow& add(TuneRow row);
  // The accurate kernel's variant id, which the baselines are rows of.
  void set_base(std::string id) { base_id_ = std::move(id); }
  // `id` of `app` was proposed as a combination (its sweep rows are scaled by the combinations'
  // baseline stage under --devices).
  void mark_combination(const std::string& app, const std::string& id) {
    combinations_.insert(app + "|" + id);
  }
  const TuneRow* find(const std::string& stage, const std::string& app, const std::string& id,
                      const std::string& shape, const std::string& input, int device = 0) const;
  // The row's time under the objective (median and cv, ns), on the first device's scale; none
  // when it has no such samples or its device has no baseline.
  std::optional<TimingStats> objective_time(const TuneRow& row) const;
  std::optional<TimingStats> raw_objective_time(const ResultRow& row) const;
  // The app's home device's accurate time over that of the device that measured a sweep row (the
  // median over the launch shapes of their ratio); 1 for the home device's rows.
  std::optional<double> device_scale(const TuneRow& row) const;
  std::optional<double> best_baseline(const std::string& stage, const std::string& app,
                                      int device) const;
  // Under --devices with at least as many apps as devices, each app has a home device (apps in
  // turn) that measures all of its rows; otherwise every app's home is the first device, which
  // sweeps its accurate kernel, and the other devices' sweep rows are put on its scale.
  bool apps_have_homes() const;
  int home_device(const std::string& app) const;
  // A finalist's median in the rank stage.
  std::optional<double> rank_time(const std::string& app, const std::string& id,
                                  const WorkGroup& wg) const;
  // The training errors of a variant at one shape (from one stage's rows), or why there are none.
  std::vector<double> train_errors(const std::string& stage, const AppDescriptor& app,
                                   const Variant& v, const WorkGroup& wg,
                                   std::string& problem) const;

 private:
  const TuneConfig& cfg_;
  std::vector<TuneRow> rows_;
  std::map<std::string, std::size_t> index_;
  std::set<std::string> combinations_;
  std::string base_id_;
};

}  // namespace kperf
