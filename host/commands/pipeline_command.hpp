// kperf pipeline and kperf tune --pipeline: chains of image apps, each stage at its own
// approximation (docs/pipelines.md); what the two commands share.
#pragma once

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace kperf {

int cmd_pipeline(int argc, char** argv, const std::string& command_line);
// kperf tune --pipeline: one end-to-end budget over the chain's per-stage product space.
int cmd_tune_pipeline(int argc, char** argv, const std::string& command_line);

// One stage's configurations: its variants (the product of its axes) at its launch shapes.
struct StageSpace {
  std::vector<Variant> variants;
  std::vector<WorkGroup> shapes;
};

// What both commands read: the chain, its stages' spaces, --fuse, the size and the runner's
// options.
struct ChainRequest {
  std::string name;
  std::vector<const AppDescriptor*> apps;
  std::vector<StageSpace> spaces;
  std::vector<bool> fuse = {false};  // --fuse none,all: each value a set of chains
  std::pair<int, int> size{512, 512};
  PipelineOptions opt;
};
// --pipeline, --stage, --size, --warmup, --reps (its default given), --cold and the common options
// (device, caches, kernel directory, user apps).
void add_chain_options(cxxopts::Options& options, const char* reps_default);
// Loads the built-in apps and the user apps given, and reads the chain; bad input is a UsageError.
ChainRequest read_chain_request(const cxxopts::ParseResult& args,
                                const std::vector<std::string>& stage_values);

// The --stage K:OPTIONS values of the command line, taken out of it (their option lists hold commas
// the option parser would split); returns the other arguments.
std::vector<char*> take_stage_values(int argc, char** argv, std::vector<std::string>& stages);
// One stage's space from kperf run's axis and shape options; `where` names it in errors.
StageSpace parse_stage_options(const std::string& where, const std::string& text);
// Every stage's space: a stage named twice, or one the chain does not have, is a UsageError.
std::vector<StageSpace> stage_spaces(const std::string& pipeline, std::size_t stages,
                                     const std::vector<std::string>& given);
// Every chain of the stages' product, the accurate f32 kernel added to every stage, for each value
// of `fuse`: separate launches (false), every stage at each of its shapes; or one fused launch
// (true) at each shape of the last stage (every stage's wg then that shape).
std::vector<std::vector<PipelineStage>> chains_of(const std::vector<const AppDescriptor*>& apps,
                                                  const std::vector<StageSpace>& spaces,
                                                  const std::vector<bool>& fuse = {false});
// --fuse's list: none, all, or both, each once; and as the context writes it.
std::vector<bool> parse_fuse_list(const std::string& text);
nlohmann::ordered_json fuse_json(const std::vector<bool>& fuse);
// The baseline of speedups: the fastest ok exact chain of separate launches among `rows` with
// this input (by time_ns.median), or of fused ones where none is unfused; null where none is ok.
const nlohmann::ordered_json* fastest_exact(const nlohmann::ordered_json& rows,
                                            const std::string& input);
// Every stage exact (tune.hpp's is_exact): the accurate chain, at some launch shapes.
bool exact_chain(const std::vector<PipelineStage>& chain);

// Chains measured under the fault journal (fault_journal.hpp), one bound input at a time. A row an
// earlier measuring process finished is taken as it was; a chain that faults the device is a
// device_fault row and, in a supervised process, ends it for the supervisor to measure on in a new
// one. The truth of an input with user-app stages is device work of its own: a fault there makes
// every chain on that input a device_fault row.
class ChainMeasurer {
 public:
  ChainMeasurer(PipelineRunner& runner, ChainTruth& truth, std::string pipeline);
  // Binds an input and, unless `with_truth` is false (runs that only time), its chained truth.
  void bind(const std::string& name, Grid grid, bool with_truth = true);
  const Grid& input() const { return grid_; }
  // The row of `chain` on the bound input, `fields` (a tune's stage) added, measured as `mode` says
  // (PipelineRunner::Mode).
  nlohmann::ordered_json measure(const std::vector<PipelineStage>& chain,
                                 const nlohmann::ordered_json& fields,
                                 PipelineRunner::Mode mode = PipelineRunner::Mode::kTimed);
  // --save-outputs: every chain's final output written as .npy into `dir`, named in output_file.
  void save_outputs_to(std::string dir) { save_dir_ = std::move(dir); }
  // Some chain, or a truth kernel, faulted the device (in this process or an earlier one).
  bool faulted() const { return faulted_; }
  // Wall seconds spent computing the bound inputs' truths (the harness block's share of binding).
  double truth_seconds() const { return truth_s_; }

 private:
  void check_truth();
  nlohmann::ordered_json row_of(const std::vector<PipelineStage>& chain,
                                const ChainOutcome& outcome,
                                const nlohmann::ordered_json& fields) const;
  PipelineRunner& runner_;
  ChainTruth& truth_;
  std::string pipeline_, input_name_, save_dir_;
  Grid grid_;
  std::vector<GridD> truth_grids_;
  std::string truth_status_, truth_problem_;  // why the bound input has no truth
  bool faulted_ = false;
  double truth_s_ = 0;
};

}  // namespace kperf
