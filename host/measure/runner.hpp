// The benchmark runner of kperf run, tune and check: walks inputs x apps x variants x launch
// shapes, measures each configuration as a chain of one through the measuring core (core.hpp),
// and turns every outcome (failures included) into a result row, journaled for the supervisor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps.hpp"
#include "bound_input.hpp"
#include "cl_env.hpp"
#include "copy_bandwidth.hpp"
#include "core.hpp"
#include "energy.hpp"
#include "energy_probe.hpp"
#include "inputs.hpp"
#include "io.hpp"
#include "results.hpp"
#include "schemes.hpp"

namespace kperf {

struct RunConfig {
  std::vector<const AppDescriptor*> apps;
  std::vector<Variant> variants;
  std::vector<WorkGroup> wgs;
  std::vector<ImageSource> image_inputs;
  // Sizes to resize/generate inputs at, each a separate workload; empty: native sizes (512x512
  // for generated inputs). Rodinia hotspot files are read once, with the first size as their
  // shape when given.
  std::vector<std::pair<int, int>> sizes;
  std::string temp_path, power_path;  // hotspot inputs; synthetic chip when empty
  // kperf run with no size, input or preset: how its grid was chosen (the context's default_size;
  // null otherwise).
  nlohmann::ordered_json default_size;
  // Where set, the apps with their own inputs (hotspot) run once at this size, whatever `sizes`
  // says: kperf run's default grid on a GPU, where Rodinia's explicit step would diverge.
  std::optional<std::pair<int, int>> own_input_size;
  int iterations = 60;
  AppParams params;                            // --bilateral-sigmas
  std::shared_ptr<TruthCache> truth_cache;     // none: every workload computes its truth
  std::shared_ptr<DeviceResidency> residency;  // none: every workload uploads its inputs
  int warmup = 50;
  int reps = 50;
  // Noise-based stop (--max-cv): after `reps` samples, more batches of `reps` until the samples'
  // coefficient of variation is at most max_cv or there are max_reps of them. 0: off.
  double max_cv = 0;
  int max_reps = 0;
  // --rounds: a workload's configurations are timed in this many rounds, each a share of `reps`
  // samples from every configuration in turn (1: each configuration timed whole, then the next).
  int rounds = 1;
  std::string kernel_root;          // holds kernels/ and schemes/
  std::string extra_build_options;  // --cl-options, appended to every kernel build
  // A kperf binary that compiles programs in worker processes (compile_workers.hpp); empty:
  // every build in this process.
  std::string compile_worker_exe;
  std::string save_outputs_dir;
  bool verify = false;
  bool transfers = false;  // --transfers: time upload, host packing and download too
  bool cold = false;       // --cold: flush the last-level cache before every timed sample
  bool progress = false;
  bool input_warnings = true;
  // --energy: the counter (nullptr: none) and its windows; energy_requested also without a
  // counter (--energy auto where none exists: rows say energy null).
  EnergyCounter* energy = nullptr;
  bool energy_requested = false;
  EnergyOptions energy_options;
  std::string energy_absent_reason;   // why energy is null on every row
  nlohmann::ordered_json shard_json;  // --shard: the context's shard block (null: no shard)
  bool ssim = true;                   // false: SSIM left NaN (error-only passes of the tuner)
  std::string progress_label;         // printed before the progress bar
  // Where error metrics are computed: "auto" (the device when it is a GPU with double precision),
  // "device" (wherever supported) or "host".
  std::string metrics_on = "auto";
  std::set<std::string> skip_keys;  // --resume: keys already measured
  // --dry-run: every configuration becomes a row with status "planned" (or its verdict, judged
  // before building) and nothing is built, launched or computed.
  bool dry_run = false;
  // Fields that place this run's rows in the command's journal (fault_journal.hpp): a tune's
  // stage. Every row is journaled with them, and a device_fault row an earlier process journaled
  // with them stands for its configuration instead of measuring it again.
  nlohmann::ordered_json journal_fields = nlohmann::ordered_json::object();
  // When set, only the configurations it accepts run (and count): the tuner's per-app,
  // per-variant selections.
  std::function<bool(const AppDescriptor&, const Variant&, const WorkGroup&)> only;
};

class Runner {
 public:
  Runner(ClEnv& env, RunConfig config);  // not copyable: it holds a Core

  // Runs every configuration not in skip_keys; `sink` receives each finished row.
  void run(const std::function<void(ResultRow)>& sink);

  // Copy bandwidth measured per input size, for the JSON context.
  const CopyBandwidth& copies() const { return copies_; }
  // --cold: bytes written before each timed sample to evict the cache (0 when warm).
  std::size_t flush_bytes() const { return core_.flush_bytes(); }
  // Where the harness's wall time went, in seconds per phase (compile, reference, upload,
  // timed_launches, transfers, download, metrics, verify, save_outputs, copy_bandwidth).
  nlohmann::ordered_json phases_json() const;
  // Where the error metrics were computed, and why not on the device.
  nlohmann::ordered_json metrics_json() const { return core_.metrics_json(); }
  // Programs compiled by worker processes, and the most processes at once.
  nlohmann::ordered_json compile_workers_json() const {
    return {{"processes", worker_processes_},
            {"programs", worker_programs_},
            {"starts", worker_starts_},
            {"batches", worker_batches_},
            {"seconds", worker_s_}};
  }
  bool interrupted() const { return interrupted_; }
  // The journal said to stop (fault_journal.hpp: journal_stop) before a configuration that was
  // still to be measured; interrupted() is true too.
  bool stopped() const { return stopped_; }
  // The context's energy block: the source and what it reads, idle power, the counter's update
  // period, the window; null without --energy.
  nlohmann::ordered_json energy_json() const { return energy_.json(); }

 private:
  struct Workload;  // one app on one input (runner.cpp)
  void run_workload(Workload& w, const std::function<void(ResultRow)>& sink);
  // The inputs of an app that takes none from --input: the --temp/--power files, or made at
  // `size` by the app.
  Grid load_own_inputs(const AppDescriptor& app, std::optional<std::pair<int, int>> size,
                       std::optional<Grid>& power, std::string& name) const;
  // Builds these programs (in worker processes when configured), timed as "compile".
  void prebuild(const std::vector<std::pair<std::string, std::string>>& jobs);
  // Calls `visit` for each of the workload's configurations in the sweep's order, but those a
  // resumed file holds (counted as done) and those whose device_fault row the journal holds
  // (handed on as they are); an interrupt throws Abandoned, the journal's stop Stopped.
  void for_each_pending(const Workload& w,
                        const std::function<void(const Variant&, WorkGroup)>& visit);
  // The row as the journal keeps it: its JSON with the run's journal fields.
  nlohmann::ordered_json journal_json(const ResultRow& row) const;
  // The workload as the journal names it: the run's journal fields, app, input and size.
  nlohmann::ordered_json workload_json(const Workload& w) const;
  // Sets up one configuration; false when it cannot run (its measurement says why).
  bool prepare_config(Workload& w, const Variant& v, WorkGroup wg, Prepared& p, ResultRow& row);
  ResultRow run_config(Workload& w, const Variant& v, WorkGroup wg);
  // --rounds: every configuration of the workload set up, then timed in rounds, then finished.
  void run_in_rounds(Workload& w, const std::function<void(ResultRow)>& sink);
  // After the timed samples: energy, transfers, the error, verification, the saved output and
  // the bandwidth; the measurement then goes into the row.
  void finish_config(Workload& w, Prepared& p, ResultRow& row);
  void add_bandwidth(const Workload& w, const Variant& v, WorkGroup wg, ResultRow& row);
  void verify_against_model(const Workload& w, const Variant& v, ResultRow& row,
                            const std::vector<float>& output);
  void save_output(const Workload& w, ResultRow& row, std::vector<float> output);
  // With skip_keys: whether some input still needs (app, v, wg), as far as is known before the
  // inputs are read (image apps at given sizes); false where unknown, left to the workload.
  bool still_to_measure(const AppDescriptor& app, const Variant& v, WorkGroup wg) const;
  void tick(const std::string& label);

  ClEnv& env_;
  RunConfig cfg_;
  Core core_;
  TruthSource truths_;
  CopyBandwidth copies_;
  EnergyProbe energy_;
  std::map<std::string, double> phase_s_;  // the runner's own phases (reference, verify, ...)
  // The sink run() was given: rows journaled already (replayed faults) go straight to it.
  const std::function<void(ResultRow)>* raw_sink_ = nullptr;
  std::size_t worker_processes_ = 0, worker_programs_ = 0, worker_starts_ = 0, worker_batches_ = 0;
  double worker_s_ = 0;  // wall time waiting on the compile workers
  // Programs a compile worker died building: never prebuilt in this process (prebuild()).
  std::set<std::pair<std::string, std::string>> crashed_builds_;
  std::size_t total_ = 0, done_ = 0;
  double start_s_ = 0;
  bool interrupted_ = false, stopped_ = false;
};

// A row naming the configuration: app, every axis, launch shape, input; nothing measured yet.
ResultRow describe_row(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input_name, int width, int height, int iterations);
// The measurement of a chain of one into its row: status, reason, times, errors, build log,
// kernel figures.
void fill_row(const Measurement& m, ResultRow& row);

}  // namespace kperf
