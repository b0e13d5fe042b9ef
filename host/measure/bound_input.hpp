// An input bound for measuring, and the truths it is measured against. A configuration's input
// (kperf run, tune) and a chain's (kperf pipeline) are the same thing: its grids, its truth at
// every stage of what runs on it (one stage for a configuration), and its device copies per
// storage layout. Its truth is computed, cached and judged here, once for every command.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app_truth.hpp"
#include "apps.hpp"
#include "cl_env.hpp"
#include "device_upload.hpp"
#include "io.hpp"
#include "status.hpp"
#include "storage_types.hpp"

namespace kperf {

// The truths of an input's stages, shared: a TruthCache hit hands out the cached grids, not a
// copy of them (33 MB each at 2048^2, copied three times a workload before).
class Truths {
 public:
  Truths() = default;
  explicit Truths(std::vector<GridD> grids)
      : grids_(std::make_shared<const std::vector<GridD>>(std::move(grids))) {}
  explicit Truths(std::shared_ptr<const std::vector<GridD>> grids) : grids_(std::move(grids)) {}
  const GridD& operator[](std::size_t k) const { return grids_->at(k); }
  std::size_t size() const { return grids_ ? grids_->size() : 0; }
  bool empty() const { return size() == 0; }
  void clear() { grids_.reset(); }
  const std::vector<GridD>& grids() const {
    static const std::vector<GridD> none;
    return grids_ ? *grids_ : none;
  }
  std::vector<GridD>::const_iterator begin() const { return grids().begin(); }
  std::vector<GridD>::const_iterator end() const { return grids().end(); }
  const std::shared_ptr<const std::vector<GridD>>& shared() const { return grids_; }

 private:
  std::shared_ptr<const std::vector<GridD>> grids_;
};

struct BoundInput {
  std::vector<const AppDescriptor*> apps;  // the stages' apps, in order (one for a configuration)
  std::string name;
  int width = 0, height = 0;
  Grid input;                 // hotspot: the temperature
  std::optional<Grid> power;  // the second input, where the app has one (hotspot: power)
  int iterations = 1;         // an iterated app's launches (its truth's too)
  // Every stage's truth: stage k's app applied to stage k - 1's truth, the first to the input.
  // Empty where the truth is not needed (a timing-only pass) or could not be computed
  // (truth_problem).
  Truths truths;
  std::vector<std::string> references;  // per stage: a row's reference field
  // Non-finite elements of each stage's truth, and whether every input value is finite: where it
  // is, an output with more non-finite elements than the truth is not a measurement (run_failed).
  std::vector<std::int64_t> truth_nonfinite;
  bool input_finite = true;
  // Why nothing runs on this input against its truth, with the status of every configuration or
  // chain on it: a truth kernel that does not build (build_failed, its log in truth_log), fails
  // (run_failed), faults the device (device_fault), or a truth that is non-finite on a finite input
  // (reference_failed). Empty when the truth is good.
  Status truth_status = Status::kOk;
  std::string truth_problem, truth_log;
  std::string alloc_problem;  // non-empty: its buffers do not fit (invalid_config)
  std::string note;           // a caveat copied onto every row (a diverging hotspot)
  // Device inputs by layout (precision, packing); a command's DeviceResidency shares them.
  std::shared_ptr<DeviceUploads> uploads = std::make_shared<DeviceUploads>();
  // Iterated apps: the initial state in canary guards, per storage type (storage_index).
  std::vector<unsigned char> in_init[kStorageTypes];
  std::vector<float> float_args;       // the app's float kernel arguments (traits)
  std::vector<bool> truth_on_device;   // per stage: the core's device metrics hold its truth
  mutable std::string input_key_memo;  // input_key's, hashed once (the grids do not change)
  bool truthful() const { return truth_problem.empty() && !truths.empty(); }
};

// `input` bound for `apps` (the stages in order), with nothing computed yet.
BoundInput bind_input(std::vector<const AppDescriptor*> apps, std::string name, Grid input,
                      std::optional<Grid> power = std::nullopt, int iterations = 1);

// What names an input across the passes of one command (its name, size and a sample of its
// contents), and its truth (the stages' apps, the input and the iterations): the keys of the
// TruthCache and of a DeviceResidency.
std::string input_key(const BoundInput& in);
std::string truth_key(const BoundInput& in);

// Truths kept across the measurements of one command (each of kperf tune's stages makes its own
// runner), so that an input's truth is computed once per command. Keyed by the stages' apps,
// input, size and iterations; it stops taking grids past `max_bytes`.
struct TruthCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const std::vector<GridD>>> grids;
  std::size_t bytes = 0, max_bytes = 0, hits = 0;
};

// Computes inputs' truths: a built-in's reference in double on the CPU ("cpu-double"), a user app's
// accurate kernel in double ("fp64-kernel") or, where the device has no fp64, in float
// ("device-accurate"), each stage's applied to the previous stage's truth.
class TruthSource {
 public:
  // `env` runs the user apps' truth kernels (null where every app is built in).
  TruthSource(ClEnv* env, std::string kernel_root, AppParams params = {},
              std::string extra_options = "", std::shared_ptr<TruthCache> cache = nullptr);
  // Fills in.truths, in.references and in.truth_nonfinite, then judges them (judge_truth). A truth
  // kernel that does not build, or fails on a device that still responds, sets in.truth_status and
  // truth_problem; one that faults the device sets device_fault and returns false (no further
  // device work is possible in this process).
  bool compute(BoundInput& in);
  // A user app evaluated on CPU-model tiles by its truth kernel (model_run's evaluator); empty for
  // a built-in. Throws BuildError where its truth kernel does not build.
  GridEvaluator evaluator(const AppDescriptor& app);
  // The truth of a user app: its kernel (built on first use); throws BuildError.
  AppTruth& kernel_of(const AppDescriptor& app);
  double seconds() const { return seconds_; }  // wall time computing truths
  double compile_seconds() const { return compile_s_; }
  std::size_t cache_hits() const { return cache_ ? cache_->hits : 0; }

 private:
  bool cached(BoundInput& in);
  void keep(const BoundInput& in);
  ClEnv* env_;
  std::string kernel_root_, extra_options_;
  AppParams params_;
  std::shared_ptr<TruthCache> cache_;
  std::map<std::string, std::unique_ptr<AppTruth>> kernels_;
  std::set<std::string> warned_;
  double seconds_ = 0, compile_s_ = 0;
};

// The chained truth of built-in apps, computed on the CPU (a TruthSource without a device).
std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params = {});

// The one check of a truth: non-finite elements where the input is finite make the truth broken
// (SPEC 15): every configuration or chain on the input is then a reference_failed row, whose
// reason counts them and names the truth (and, in a chain, the first broken stage).
void judge_truth(BoundInput& in);

// The truth of `in` under the fault journal (fault_journal.hpp): a fault an earlier measuring
// process recorded for this workload stands (in.truth_status device_fault: nothing of it runs
// again); a user app's truth kernel runs as the workload's own device work, and a fault there is
// journaled for every configuration or chain of the workload. `workload` names it as the journal
// does. False when the device was lost (in.truth_problem says how).
bool journaled_truth(TruthSource& truths, BoundInput& in, const nlohmann::ordered_json& workload);

}  // namespace kperf
