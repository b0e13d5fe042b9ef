// Pipelines: a chain of image apps, each stage's output the next one's input on the device, every
// stage at its own approximation and launch shape; the chain's truth is the chain of
// double-precision references (docs/pipelines.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app_truth.hpp"
#include "apps.hpp"
#include "cl_env.hpp"
#include "device_metrics.hpp"
#include "device_upload.hpp"
#include "fused_program.hpp"
#include "io.hpp"
#include "metrics.hpp"
#include "output_buffers.hpp"
#include "schemes.hpp"
#include "stats.hpp"

namespace kperf {

// The chains kperf ships, by name: blur-edges (gaussian5 then sobel3) and denoise-edges (median
// then sobel3).
const std::vector<std::pair<std::string, std::vector<std::string>>>& named_pipelines();

// The apps of a chain given by name or as APP,APP[,...] (built-in or user apps already loaded).
// Throws std::invalid_argument with one line naming the stage: an unknown app, an app that takes no
// image (hotspot) or a second input, or fewer than two stages.
std::vector<const AppDescriptor*> parse_pipeline(const std::string& text);

// A chain's identity on one input: "PIPELINE/STAGE > STAGE/INPUT/WxH", each stage
// app:variant@shape. Rows, the fault journal and KPERF_FAULT know a chain by it.
std::string chain_key(const std::string& pipeline, const std::vector<PipelineStage>& chain,
                      const std::string& input, int width, int height);
std::string stage_label(const PipelineStage& s);

// Why a stage reading `next` cannot take the device output of a stage under `prev`: the stored
// types differ (the intermediate buffer is one type: prev's output, next's input), or `next` reads
// its input from the host (host perforation) or as an image. Nothing when they connect.
std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next);

// The storage type of the buffer between a stage under `prev` and the next one.
const StorageType& intermediate_type(const Variant& prev);

struct PipelineOptions {
  std::string pipeline = "pipeline";  // the chain's name, in keys
  int warmup = 10, reps = 50;
  bool cold = false;  // flush the device's cache before every sample of the chain
  std::string kernel_root, extra_build_options;
  AppParams params;
  // Test hook: in the pass that reads the outputs, every element a stage does not read (the first
  // stage's input on the host, later ones in the buffer before them) is NaN.
  bool poison_unread = false;
  // Read every stage's output back to the host (StageOutcome::output). Without it outputs stay on
  // the device, their errors measured there where it can.
  bool read_outputs = true;
};

struct StageOutcome {
  std::vector<std::uint64_t> samples_ns;  // this stage's launches per chain sample
  std::vector<float> output;              // as stored, read back as floats (read_outputs)
  std::optional<ErrorMetrics> errors;     // against the bound truth at this stage, where measured
  std::string build_log;
  std::string output_file;  // where save_output wrote this stage's output
};

struct ChainOutcome {
  std::string status = "ok", reason;  // as a run row's status (results.hpp)
  int failed_stage = -1;              // 0-based, where a stage caused the status
  std::vector<StageOutcome> stages;
  std::vector<std::uint64_t> total_ns;  // every stage's launches per chain sample
  std::string output_file;              // where save_output wrote the final output (the last
                                        // stage's output_file)
  bool output_lost = false;             // measured, but save_output could not write it
  bool ok() const { return status == "ok"; }
};

// Runs chains on one device, on one bound input at a time: the input is uploaded once per layout
// and the truth once per stage, whatever the number of chains. After a chain faults the device (its
// queue or context lost), the chains after it are device_fault rows that say so, measured by no
// one: a supervised command restarts instead (fault_journal.hpp).
class PipelineRunner {
 public:
  PipelineRunner(ClEnv& env, PipelineOptions options);
  // The input later runs read (`name`, in keys) and, when given, its chained truth (one grid per
  // stage) that errors are measured against: on the device where it computes in double
  // (device_metrics.hpp), else on the host from the outputs read back.
  void set_input(const std::string& name, const Grid& input,
                 const std::vector<GridD>* truth = nullptr);
  // kTimed: warm-up, then `reps` timed runs of the chain; then one run into NaN-poisoned buffers
  // whose every stage's error is measured against the truth. kFinalError: that one run alone,
  // measuring the last stage's error. kTimeOnly: the timed runs alone.
  enum class Mode { kTimed, kFinalError, kTimeOnly };
  // `fault_stage`: the tune stage it is measured in (KPERF_FAULT's stage=; "" elsewhere).
  ChainOutcome run(const std::vector<PipelineStage>& chain, Mode mode = Mode::kTimed,
                   const std::string& fault_stage = "");
  // Binds `input` without a truth and runs the chain (tests: outputs read back).
  ChainOutcome run(const std::vector<PipelineStage>& chain, const Grid& input) {
    set_input("input", input);
    return run(chain);
  }
  bool device_lost() const { return !lost_by_.empty(); }
  // Writes an ok chain's outputs that were read back into `dir` as float32 .npy, named from `key`:
  // the final one into the chain's output_file, each earlier stage's as KEY.stageK.npy into the
  // stage's; where that fails (KPERF_FAULT=save too), the chain is a host_error row that says so,
  // its measurements kept.
  void save_output(ChainOutcome& outcome, const std::string& dir, const std::string& key) const;
  // Builds every stage program of `chains` at once on the host's threads; runs then find them.
  void prebuild(const std::vector<std::vector<PipelineStage>>& chains);
  struct StageSetup;  // one stage built and bound, ready to launch (pipeline.cpp's own)

 private:
  struct Bound {
    std::string name;
    const Grid* grid = nullptr;
    const std::vector<GridD>* truth = nullptr;
    // Every input element finite: then an output with more non-finite elements than the truth
    // was never written, or read what was never loaded.
    bool finite = true;
    std::vector<std::int64_t> truth_nonfinite;
    DeviceUploads uploads;
    std::vector<bool> truth_on_device;  // per stage: metrics_[k] holds this input's truth
  };
  // Why the chain cannot run here, judged before anything is built: (0-based stage or -1, verdict).
  std::optional<std::pair<int, Verdict>> static_problem(
      const std::vector<PipelineStage>& chain) const;
  // One run into NaN-poisoned outputs in canary bands (under poison_unread, every element a stage
  // does not read poisoned too); a band overwritten makes the chain run_failed. `stage` says which
  // stage it was at, should an OpenCL call throw.
  void run_poisoned(const std::vector<PipelineStage>& chain, std::vector<StageSetup>& setups,
                    const DeviceUpload& up, ChainOutcome& out, int& stage);
  // The outputs of that run and their errors (every stage, or the last).
  void measure_outputs(const std::vector<PipelineStage>& chain, std::vector<StageSetup>& setups,
                       const DeviceUpload& up, bool every_stage, ChainOutcome& out, int& stage);
  // Stage k's error of `output` against the bound truth: on the device, else on the host.
  ErrorMetrics stage_errors(std::size_t k, const cl::Buffer& output, const StorageType& type,
                            const std::vector<float>* host_output);
  bool measures_on_device(std::size_t k);
  // The probe after an OpenCL error (KPERF_FAULT=lose-queue fails it).
  bool device_responds(std::string& why);
  // A stage's kernel source (read once per file).
  const std::string& source_of(const AppDescriptor& app);
  // The text and build options of the launch that writes stage k's output: the stage's own
  // program, or the fused chain's (made once per chain).
  std::pair<std::string, std::string> program_of(const std::vector<PipelineStage>& chain,
                                                 std::size_t k);
  // Stage k's output buffers at this size, in canary bands (runner's OutputBuffers).
  const OutputBuffers& output_buffers(std::size_t k, int width, int height);

  ClEnv& env_;
  PipelineOptions opt_;
  Bound in_;
  std::string lost_by_;
  std::optional<cl::Buffer> flush_;
  std::size_t flush_bytes_ = 0;
  std::vector<std::unique_ptr<OutputBuffers>> outputs_;  // per stage
  bool injected_loss_ = false;
  std::optional<std::string> metrics_unsupported_;  // why errors are measured on the host
  std::vector<std::unique_ptr<DeviceMetrics>> metrics_;
  std::optional<std::string> half_image_problem_;
  std::map<std::string, std::string> sources_;                        // by kernel file
  std::map<std::string, std::pair<std::string, std::string>> fused_;  // by the chain's stages
};

// Each stage's truth: a built-in's double-precision reference, a user app's accurate kernel in
// double (app_truth.hpp), each applied to the previous stage's truth, the first to the input.
class ChainTruth {
 public:
  // `env` runs the user apps' truth kernels (null where every stage is built in).
  ChainTruth(ClEnv* env, const std::vector<const AppDescriptor*>& apps,
             const std::string& kernel_root, const AppParams& params = {},
             const std::string& extra_options = "");
  // Why there is no truth: a user app's truth kernel that does not build ("" when there is one).
  const std::string& problem() const { return problem_; }
  // The chained truth of `input`; throws cl::Error where a truth kernel fails on the device.
  std::vector<GridD> of(const Grid& input);
  // Stage k's reference: "cpu-fp64", "fp64-kernel" or "device-accurate" (a row's reference).
  std::string reference(std::size_t k) const;
  // Stage k's app evaluated on CPU-model tiles (for chain_model); empty for a built-in.
  GridEvaluator evaluator(std::size_t k);

 private:
  std::vector<const AppDescriptor*> apps_;
  AppParams params_;
  std::vector<std::unique_ptr<AppTruth>> kernels_;  // per stage; null for built-ins
  std::string problem_;
};

// The chained truth of built-in apps (ChainTruth without a device).
std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params = {});

// The chained CPU models: each stage's model_run on the previous model's output rounded to the
// stored intermediate type, as the device hands it on. A user app's stage needs its evaluator
// (ChainTruth::evaluator), by stage.
std::vector<GridD> chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                               const AppParams& params = {},
                               const std::vector<GridEvaluator>& evaluators = {});

// The CPU model of a fused chain's output (fused_model.hpp), a user app's stage evaluated by its
// evaluator (ChainTruth::evaluator), by stage.
GridD fused_chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                        const AppParams& params = {},
                        const std::vector<GridEvaluator>& evaluators = {});

}  // namespace kperf
