// The measuring core: one chain of stages (a configuration of kperf run and tune is a chain of
// one) on one bound input, built, set up, timed with profiling events and its outputs checked
// against the truth, every outcome a typed Measurement whose status says what happened. kperf run
// and tune (runner.hpp), kperf pipeline and tune --pipeline (chain_measurer.hpp) and kperf check
// measure through it; the drivers add what their documents need (sweeps, keys, the journal).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bound_input.hpp"
#include "chain.hpp"
#include "cl_env.hpp"
#include "device_metrics.hpp"
#include "device_residency.hpp"
#include "device_upload.hpp"
#include "launch_checks.hpp"
#include "metrics.hpp"
#include "output_buffers.hpp"
#include "results.hpp"
#include "stats.hpp"
#include "status.hpp"

namespace kperf {

struct Abandoned {};  // an interrupt arrived mid-measurement (interrupt_requested())
struct Stopped {};    // the journal says to measure nothing more (fault_journal.hpp)

// Set by SIGINT/SIGTERM where a command catches them; a measurement stops at its next check.
std::atomic<bool>& interrupt_requested();

struct CoreOptions {
  std::string kernel_root;          // holds kernels/ and schemes/
  std::string extra_build_options;  // --cl-options, appended to every kernel build
  AppParams params;                 // --bilateral-sigmas
  // --warmup counts launches: an iterated sample of `iterations` launches warms up with whole
  // samples until at least that many ran; a chain's sample is one run of every stage.
  int warmup = 50;
  int reps = 50;
  // --max-cv: after a batch of samples, more batches until the samples' coefficient of variation
  // is at most max_cv or there are max_reps of them. 0: off.
  double max_cv = 0;
  int max_reps = 0;
  bool stamp_rounds = false;  // --rounds: each batch's first launch dated on the device's clock
  bool cold = false;          // flush the last-level cache before every timed sample
  bool ssim = true;           // false: SSIM left NaN (error-only passes)
  // Where errors are computed: "auto" (the device when it is a GPU with double precision),
  // "device" (wherever supported) or "host".
  std::string metrics_on = "auto";
  bool read_outputs = false;  // every stage's output read back to the host (Measurement::stages)
  // Test hook: in the run that reads the outputs, every element a stage does not read (the first
  // stage's input on the host, later ones in the buffer before them) is NaN.
  bool poison_unread = false;
  // Inputs and truths kept on the device across this command's cores; none: each bind uploads.
  std::shared_ptr<DeviceResidency> residency;
};

// kTimed: warm-up, then timed samples, then every stage's error. kFinalError: one untimed run,
// the last stage's error. kTimeOnly: the timed samples alone.
enum class MeasureMode { kTimed, kFinalError, kTimeOnly };

// What one stage measured.
struct StageMeasurement {
  std::vector<std::uint64_t> samples_ns;  // this stage's launches per sample (none when fused)
  std::optional<ErrorMetrics> errors;     // against the bound truth at this stage, where measured
  std::vector<double> error_reps;         // a racing chain: the primary metric of several runs
  std::vector<float> output;              // as stored, read back as floats (read_outputs)
  std::string build_log;                  // a failed build's log, or a build's warnings
  std::optional<ResultRow::KernelInfo> kernel_info;
  std::string output_file;  // where save_stage_outputs wrote it
};

struct Measurement {
  Status status = Status::kOk;
  std::string reason;
  int failed_stage = -1;  // 0-based, where a stage caused the status
  std::vector<StageMeasurement> stages;
  std::vector<std::uint64_t> samples_ns;  // every launch of a sample, summed, per sample
  std::optional<TimingStats> time;
  std::vector<std::uint64_t> round_start_ns;  // stamp_rounds: each batch's first launch
  std::string stop_reason;                    // --max-cv: "cv" or "max_reps"
  bool ok() const { return status == Status::kOk; }
  void fail(Status s, std::string why, int stage = -1);
};

// One launch of the app kernel and, under a two-launch output scheme, the fill kernel after it.
struct LaunchStep {
  cl::Kernel app;
  std::optional<cl::Kernel> fill;
};

// What one sample of a launch enqueues: `launches` steps (an iterated app alternates two output
// buffers), each with its fill kernel where there is one. Every launch has its own event.
struct SampleLaunches {
  std::vector<LaunchStep>* steps = nullptr;
  cl::NDRange global, local, fill_global, fill_local;
  int launches = 1;
  bool ping_pong() const { return steps->size() > 1; }
  // The output buffer that holds the result after a sample.
  int final_buffer() const { return ping_pong() ? launches % 2 : 0; }
  int events() const { return launches * ((*steps)[0].fill ? 2 : 1); }
  void enqueue(cl::CommandQueue& queue, std::vector<cl::Event>* events) const;
};

// The launches of one sample of `steps` on a width x height grid, with the fill kernel's
// geometry under a two-launch output scheme.
SampleLaunches make_sample_launches(const ClEnv& env, const Variant& v, int width, int height,
                                    std::vector<LaunchStep>& steps, const cl::NDRange& global,
                                    const cl::NDRange& local, int launches);

// One launch of a chain set up: a stage's own, or a fused chain's one (writing the last stage's
// output). `sample` points into `steps`.
struct LaunchSetup {
  std::size_t stage = 0;  // the stage whose output it writes
  cl::Program program;
  std::vector<LaunchStep> steps;
  SampleLaunches sample;
  const StorageType* out_type = nullptr;
  cl::Buffer output;  // the final output buffer's interior at out_type
};

// A chain set up to launch: built, checked, its input on the device. kperf run's --rounds holds a
// workload's chains like this while it times them in turn; it stays where it was made.
struct Prepared {
  Chain chain;
  std::string key;          // the row's key: KPERF_FAULT and the journal know it by it
  std::string fault_stage;  // the tune stage it is measured in (KPERF_FAULT's stage=)
  std::vector<LaunchSetup> launches;
  DeviceUpload* input = nullptr;
  Measurement m;
  bool fault_checked = false;
  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
};

class Core {
 public:
  Core(ClEnv& env, CoreOptions options);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  ClEnv& env() { return env_; }
  const CoreOptions& options() const { return opt_; }

  // Sizes the output buffers for `in` (in.alloc_problem says why they do not fit) and puts its
  // truths where the errors are computed.
  void bind(BoundInput& in);
  // Why `chain` cannot run on `in`, judged before anything is built: (0-based stage or -1,
  // verdict). The launch's device limits and scheme validity, the buffers, the truth, the output
  // scheme's fit, the stages' connections, a fused chain's own limits.
  std::optional<std::pair<int, Verdict>> static_check(const BoundInput& in,
                                                      const Chain& chain) const;
  // The programs (source, build options) `chain` launches, for building ahead.
  std::vector<std::pair<std::string, std::string>> programs(const Chain& chain);
  // Builds and sets up `chain` on `in`; false when it cannot run (p.m then says why).
  bool prepare(BoundInput& in, const Chain& chain, Prepared& p);
  // Warm-up, then `samples` timed samples appended to p.m (with max_cv, more batches).
  void time(BoundInput& in, Prepared& p, int samples);
  // The outputs and their errors against the truth (every stage, or the last): from a fresh run
  // into NaN-poisoned outputs in canary bands where `rerun`, else from what the last sample left.
  // False when the measurement failed.
  bool measure_outputs(BoundInput& in, Prepared& p, bool every_stage, bool rerun);
  // Runs one part of a measurement; a device or host failure ends it with its status:
  // device_fault (and no further device work: lost()) where the device no longer responds after
  // the error, run_failed where it does, host_error for the host's own failures.
  bool attempt(Prepared& p, const std::function<void()>& part, int stage = -1);
  // prepare, then time and measure as `mode` says: the whole path of one chain.
  Measurement measure(BoundInput& in, const Chain& chain, const std::string& key, MeasureMode mode,
                      const std::string& fault_stage = "");

  // A measurement faulted the device: no more device work in this process; `lost_by` says which.
  bool lost() const { return !lost_by_.empty(); }
  const std::string& lost_by() const { return lost_by_; }
  // Wall seconds per phase (compile, upload, timed_launches, download, metrics).
  std::map<std::string, double>& phases() { return phases_; }
  const std::map<std::string, double>& phases() const { return phases_; }
  std::size_t flush_bytes() const { return flush_bytes_; }
  const cl::Buffer& flush_buffer() const { return flush_; }
  // Where errors are computed, and why not on the device.
  nlohmann::ordered_json metrics_json() const;
  // Stage k's output buffers and the second input's buffer of `type`, for kperf run's transfers.
  OutputBuffers& outputs(std::size_t k) { return *outputs_[k]; }
  // The second input of `in` stored as `type`, uploaded on first use after bind().
  cl::Buffer& power(const BoundInput& in, const StorageType& type);
  const std::string& kernel_source(const std::string& file);

 private:
  struct Impl;  // the device state the core keeps between chains
  bool set_up_launch(BoundInput& in, const Chain& chain, std::size_t i, Prepared& p);
  void bind_steps(BoundInput& in, Prepared& p, LaunchSetup& l, cl::Kernel kernel, std::size_t i);
  std::pair<std::string, std::string> program_of(const Chain& chain, std::size_t k);
  void reset_outputs(const BoundInput& in, Prepared& p);
  bool stage_errors(BoundInput& in, Prepared& p, LaunchSetup& l, bool measured);
  void launch_fault(Prepared& p);
  std::vector<float> read_output(const LaunchSetup& l, std::size_t n);

  ClEnv& env_;
  CoreOptions opt_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<OutputBuffers>> outputs_;  // per stage position
  std::map<std::string, double> phases_;
  cl::Buffer flush_;
  std::size_t flush_bytes_ = 0;
  std::string lost_by_;
  bool injected_loss_ = false;
};

}  // namespace kperf
