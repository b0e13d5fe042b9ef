// Pipelines: a chain of image apps, each stage's output the next one's input on the device,
// every stage at its own approximation and launch shape; the chain's truth is the chain of
// double-precision references (docs/pipelines.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "io.hpp"
#include "schemes.hpp"
#include "stats.hpp"

namespace kperf {

// The chains kperf ships, by name: blur-edges (gaussian5 then sobel3) and denoise-edges (median
// then sobel3).
const std::vector<std::pair<std::string, std::vector<std::string>>>& named_pipelines();

// The apps of a chain given by name or as APP,APP[,...]. Throws std::invalid_argument with one
// line naming the stage: an unknown app, an app that takes no image (hotspot) or a second input,
// or fewer than two stages.
std::vector<const AppDescriptor*> parse_pipeline(const std::string& text);

struct PipelineStage {
  const AppDescriptor* app = nullptr;
  Variant variant;
  WorkGroup wg;
};

// Why a stage reading `next` cannot take the device output of a stage under `prev`: the stored
// types differ (the intermediate buffer is one type: prev's output, next's input), or `next`
// reads its input from the host (host perforation) or as an image. Nothing when they connect.
std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next);

// The storage type of the buffer between a stage under `prev` and the next one.
const StorageType& intermediate_type(const Variant& prev);

struct PipelineOptions {
  int warmup = 10, reps = 50;
  bool cold = false;  // flush the device's cache before every sample of the chain
  std::string kernel_root, extra_build_options;
  AppParams params;
  // Test hook: in the pass that reads the outputs, every element a stage does not read (the
  // first stage's input on the host, later ones in the buffer before them) is NaN.
  bool poison_unread = false;
  // Read back every stage's output, or the last stage's alone (an error-only pass of the chain
  // tuner, which judges the final output).
  bool read_every_stage = true;
};

struct StageOutcome {
  std::vector<std::uint64_t> samples_ns;  // this stage's launches per chain sample
  std::vector<float> output;              // as stored, read back as floats
  std::string build_log;
};

struct ChainOutcome {
  std::string status = "ok", reason;  // as a run row's status (results.hpp)
  int failed_stage = -1;              // 0-based, where a stage caused the status
  std::vector<StageOutcome> stages;
  std::vector<std::uint64_t> total_ns;  // every stage's launches per chain sample
  bool ok() const { return status == "ok"; }
};

// Runs chains on one device. After a chain faults the device (its queue or context lost), the
// chains after it are device_fault rows that say so, measured by no one.
class PipelineRunner {
 public:
  PipelineRunner(ClEnv& env, PipelineOptions options);
  ChainOutcome run(const std::vector<PipelineStage>& chain, const Grid& input);
  bool device_lost() const { return !lost_by_.empty(); }

 private:
  ClEnv& env_;
  PipelineOptions opt_;
  std::string lost_by_;
  std::optional<cl::Buffer> flush_;
  std::size_t flush_bytes_ = 0;
};

// The chained truth: each stage's double-precision reference applied to the previous stage's
// truth (the first to the input).
std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params = {});

// The chained CPU models: each stage's model_run on the previous model's output rounded to the
// stored intermediate type, as the device hands it on.
std::vector<GridD> chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                               const AppParams& params = {});

}  // namespace kperf
