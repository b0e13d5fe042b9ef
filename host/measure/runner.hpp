// The benchmark runner: walks inputs x apps x variants x work-groups, times each
// configuration with profiling events, checks its output, and turns every outcome (including
// failures) into a result row.
#pragma once

#include <atomic>
#include <functional>
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
#include "device_metrics.hpp"
#include "energy.hpp"
#include "inputs.hpp"
#include "io.hpp"
#include "results.hpp"
#include "schemes.hpp"

namespace kperf {

// Truths kept across the Runners of one kperf tune (each of its stages makes one), so that an
// input's reference is computed once per tune rather than once per stage. Keyed by app, input,
// size and iterations; it stops taking grids past `max_bytes`.
struct TruthCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const GridD>> grids;
  std::size_t bytes = 0, max_bytes = 0, hits = 0;
};

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
  AppParams params;                         // --bilateral-sigmas
  std::shared_ptr<TruthCache> truth_cache;  // none: every workload computes its truth
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
  std::string energy_absent_reason;  // why energy is null on every row
  nlohmann::ordered_json
      shard_json;  // --shard: the context's shard block (null: no shard)  // false: inputs poisoned
                   // on purpose (kperf check) pass silently
  bool ssim = true;            // false: SSIM left NaN (error-only passes of the tuner)
  std::string progress_label;  // printed before the progress bar
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

// Why `app` under variant `v` cannot launch as `wg` on a device with these limits (scheme
// validity, CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES, local memory), judged
// before anything is built. The kernel's own CL_KERNEL_WORK_GROUP_SIZE is checked after building.
std::optional<Verdict> check_launch(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                    const DeviceInfo& dev);
// Why a work-group of this shape cannot launch on the device (CL_DEVICE_MAX_WORK_GROUP_SIZE,
// CL_DEVICE_MAX_WORK_ITEM_SIZES): check_launch's part that any kernel shares.
std::optional<Verdict> check_work_group(WorkGroup wg, const DeviceInfo& dev);
// Local memory the tile of this launch needs, as kperf_tile.cl lays it out (0 without a tile).
std::size_t tile_local_bytes(const AppDescriptor& app, const Variant& v, WorkGroup wg);

struct Workload;
struct DeviceUpload;
struct DeviceBuffers;
struct LaunchStep;
struct SampleLaunches;
struct PreparedConfig;

// Set by SIGINT/SIGTERM; the runner stops after the configuration in flight.
std::atomic<bool>& interrupt_requested();

// The bytes --cold fills before every timed sample on a device.
std::size_t cold_flush_bytes(const DeviceInfo& dev);

class Runner {
 public:
  Runner(ClEnv& env, RunConfig config);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs every configuration not in skip_keys; `sink` receives each finished row.
  void run(const std::function<void(ResultRow)>& sink);

  // Copy bandwidth measured per input size, for the JSON context.
  nlohmann::ordered_json copy_json() const;
  double largest_copy_gbps() const;
  // --cold: bytes written before each timed sample to evict the cache (0 when warm).
  std::size_t flush_bytes() const { return flush_bytes_; }
  // Where the harness's wall time went, in seconds per phase (compile, reference, upload,
  // timed_launches, transfers, download, metrics, verify, save_outputs, copy_bandwidth).
  nlohmann::ordered_json phases_json() const;
  // Where the error metrics were computed, and why not on the device.
  nlohmann::ordered_json metrics_json() const;
  // Programs compiled by worker processes, and the most processes at once.
  nlohmann::ordered_json compile_workers_json() const {
    return {{"processes", worker_processes_}, {"programs", worker_programs_}};
  }
  bool interrupted() const { return interrupted_; }
  // The journal said to stop (fault_journal.hpp: journal_stop) before a configuration that was
  // still to be measured; interrupted() is true too.
  bool stopped() const { return stopped_; }
  // The context's energy block: the source and what it reads, idle power, the counter's update
  // period, the window; null without --energy.
  nlohmann::ordered_json energy_json() const;
  std::size_t total_configs() const { return total_; }

 private:
  std::unique_ptr<DeviceBuffers> buffers_;
  std::size_t worker_processes_ = 0, worker_programs_ = 0;
  // Programs a compile worker died building: never prebuilt in this process (prebuild()).
  std::set<std::pair<std::string, std::string>> crashed_builds_;
  std::optional<DeviceMetrics> device_metrics_;
  std::string metrics_reason_;
  struct CopyResult {
    int width, height;
    double scalar_gbps, vec4_gbps;
    std::string status;
    // Copies of halves at the half precisions' stored sizes (copy.cl): raw, through float and
    // back, half to float. Context only: the roofline stays the float copy's.
    double half_gbps = 0, half_convert_gbps = 0, half_to_float_gbps = 0;
    // --cold: a cache flush before each timed copy, as before each timed sample of a kernel
    // (`flushes` of them, all the copies' together).
    bool cold = false;
    long flushes = 0;
  };

  void run_workload(Workload& w, const std::function<void(ResultRow)>& sink);
  void prepare_buffers(Workload& w);
  // The inputs of an app that takes none from --input: the --temp/--power files, or made at
  // `size` by the app.
  void load_own_inputs(Workload& w, std::optional<std::pair<int, int>> size) const;
  // Builds these programs (in worker processes when configured), timed as "compile".
  void prebuild(const std::vector<std::pair<std::string, std::string>>& jobs);
  ResultRow run_config(Workload& w, const Variant& v, WorkGroup wg);
  // Calls `visit` for each of the workload's configurations in the sweep's order, but those a
  // resumed file holds (counted as done) and those whose device_fault row the journal holds
  // (handed on as they are); an interrupt throws Abandoned, the journal's stop Stopped.
  void for_each_pending(
      const Workload& w,
      const std::function<void(const Variant&, WorkGroup, const std::string&)>& visit);
  // The row as the journal keeps it: its JSON with the run's journal fields.
  nlohmann::ordered_json journal_json(const ResultRow& row) const;
  // The workload as the journal names it: the run's journal fields, app, input and size.
  nlohmann::ordered_json workload_json(const Workload& w) const;
  // Whether the device still runs commands after an error: a queue that finishes and a buffer
  // that round-trips; else `why` says what failed.
  bool device_responds(std::string& why);
  // KPERF_FAULT=crash:KEY / lose-queue:KEY: the configurations whose key contains KEY fault at
  // their first timed launch, as PoCL (a signal) and NVIDIA (an invalidated queue) do.
  void injected_launch_fault(const std::string& key);
  // The sink run() was given: rows journaled already (replayed faults) go straight to it.
  const std::function<void(ResultRow)>* raw_sink_ = nullptr;
  bool lost_ = false;           // a configuration faulted the device: no more device work
  bool injected_loss_ = false;  // KPERF_FAULT=lose-queue made the device "stop responding"
  bool stopped_ = false;
  // --rounds: every configuration of the workload set up, then timed in rounds, then finished.
  void run_in_rounds(Workload& w, const std::function<void(ResultRow)>& sink);
  // Builds and sets up one configuration; false when it cannot run (p.row then says why).
  bool prepare_config(Workload& w, const Variant& v, WorkGroup wg, PreparedConfig& p);
  // After the timed samples: energy, transfers, the error, verification, the saved output and
  // the bandwidth.
  void finish_config(Workload& w, PreparedConfig& p);
  // Runs one part of a configuration; a device or host failure ends the row with its status:
  // device_fault (and no further device work: lost_) where the device no longer responds after
  // the error, run_failed where it does.
  bool attempt(ResultRow& row, const std::function<void()>& part);
  // The launches of one sample: the app kernel with its arguments on each output buffer (an
  // iterated app ping-pongs between two), each with its fill kernel under a two-launch output.
  std::vector<LaunchStep> launch_steps(Workload& w, const Variant& v, const cl::Program& program,
                                       cl::Kernel kernel, DeviceUpload& input);
  void add_bandwidth(const Workload& w, const Variant& v, WorkGroup wg, ResultRow& row);
  // Why a configuration cannot run, judged before building (scheme, device limits, memory).
  std::optional<Verdict> static_check(const Workload& w, const Variant& v, WorkGroup wg) const;
  std::string build_options(const AppDescriptor& app, const Variant& v, WorkGroup wg) const;
  // Timing one configuration (config_timing.cpp): the launches of a sample, the outputs reset
  // before it, warm-up and timed batches, and with --transfers the end-to-end repetitions.
  SampleLaunches sample_launches(const Variant& v, const Workload& w,
                                 std::vector<LaunchStep>& steps, const cl::NDRange& global,
                                 const cl::NDRange& local, int launches) const;
  void reset_outputs(const Workload& w, const Variant& v, const SampleLaunches& sample);
  // One untimed sample from freshly reset outputs (the output measured after timing).
  void rerun_sample(const Workload& w, const Variant& v, const SampleLaunches& sample);
  // Warm-up, then `samples` timed samples appended to the row's (with --max-cv, more batches).
  void time_samples(const Workload& w, const Variant& v, ResultRow& row,
                    const SampleLaunches& sample, int samples);
  void time_transfers(Workload& w, const Variant& v, ResultRow& row, const SampleLaunches& sample,
                      DeviceUpload& input);
  // The output of a configuration (config_outputs.cpp): its error against the truth (several
  // launches for racing variants), --verify against the CPU model, --save-outputs. False when
  // the row failed (a guard band overwritten); `output` holds the downloaded output, if any.
  // others_ran: other configurations launched since this one's samples (--rounds).
  bool measure_errors(Workload& w, const Variant& v, ResultRow& row, const SampleLaunches& sample,
                      bool others_ran, std::vector<float>& output);
  std::optional<ErrorMetrics> measure_once(Workload& w, const Variant& v, ResultRow& row,
                                           const SampleLaunches& sample, bool rerun,
                                           std::vector<float>& output);
  std::vector<float> download_output(Workload& w, const Variant& v, ResultRow& row,
                                     const SampleLaunches& sample, bool rerun);
  // The workload's truth: a built-in's C++ reference, a user app's own kernel in fp64 (AppTruth);
  // a truth kernel that does not build marks the workload's configurations build_failed.
  void compute_truth(Workload& w, int iterations);
  void prepare_truth(Workload& w, int iterations);
  // With skip_keys: whether some input still needs (app, v, wg), as far as is known before the
  // inputs are read (image apps at given sizes); false where unknown, left to the workload.
  bool still_to_measure(const AppDescriptor& app, const Variant& v, WorkGroup wg) const;
  // The truth cache (RunConfig::truth_cache): fills w's truth from it, or keeps w's truth in it.
  bool cached_truth(Workload& w, int iterations);
  void keep_truth(const Workload& w, int iterations);
  // Evaluates a user app's model tiles with its truth kernel (empty for built-ins).
  GridEvaluator model_evaluator(const AppDescriptor& app);
  AppTruth& truth_for(const AppDescriptor& app);
  std::map<std::string, std::unique_ptr<AppTruth>> truths_;
  std::set<std::string> warned_truth_;
  // --energy: windows of back-to-back samples after the timed ones (energy.hpp), and the idle
  // power they are set against, measured once per run.
  void measure_energy(const Workload& w, ResultRow& row, const SampleLaunches& sample);
  void measure_idle_power();
  double idle_power_w_ = 0;
  double counter_period_s_ = 0;
  std::string idle_problem_;
  void verify_against_model(const Workload& w, const Variant& v, ResultRow& row,
                            const std::vector<float>& output);
  void save_output(const Workload& w, ResultRow& row, std::vector<float> output);
  // The device input of variant v for this workload (converted and/or packed), made on first use.
  DeviceUpload& input_for(Workload& w, const Variant& v);
  double copy_gbps_for(int width, int height);
  // Empty when the device reads CL_R / CL_HALF_FLOAT images correctly, else why not (probed
  // once with known values).
  const std::string& half_image_problem();
  std::optional<std::string> half_image_problem_;
  std::map<std::string, double> phase_s_;
  // Pinned (CL_MEM_ALLOC_HOST_PTR, mapped once) memory that outputs are read into: a pageable
  // download of a fresh vector per configuration cost 0.5 s at 8192^2 on the H100.
  unsigned char* staging(std::size_t bytes);
  cl::Buffer stage_;
  unsigned char* stage_ptr_ = nullptr;
  std::size_t stage_bytes_ = 0;
  cl::Buffer flush_;
  std::size_t flush_bytes_ = 0;
  const std::string& kernel_source(const std::string& file);
  void tick(const std::string& label);
  bool selected(const AppDescriptor& app, const Variant& v, const WorkGroup& wg) const {
    return !cfg_.only || cfg_.only(app, v, wg);
  }

  ClEnv& env_;
  RunConfig cfg_;
  std::map<std::string, std::string> sources_;
  std::vector<CopyResult> copies_;
  std::size_t total_ = 0, done_ = 0;
  double start_s_ = 0;
  bool interrupted_ = false;
};

}  // namespace kperf
