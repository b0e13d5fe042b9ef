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

// What both commands read: the chain, its stages' spaces, the size and the runner's options.
struct ChainRequest {
  std::string name;
  std::vector<const AppDescriptor*> apps;
  std::vector<StageSpace> spaces;
  std::pair<int, int> size{512, 512};
  PipelineOptions opt;
};
// --pipeline, --stage, --size, --warmup, --reps (its default given), --cold and the common
// options (device, caches, kernel directory).
void add_chain_options(cxxopts::Options& options, const char* reps_default);
// Loads the built-in apps and reads the chain; bad input is a UsageError.
ChainRequest read_chain_request(const cxxopts::ParseResult& args,
                                const std::vector<std::string>& stage_values);

// The --stage K:OPTIONS values of the command line, taken out of it (their option lists hold
// commas the option parser would split); returns the other arguments.
std::vector<char*> take_stage_values(int argc, char** argv, std::vector<std::string>& stages);
// One stage's space from kperf run's axis and shape options; `where` names it in errors.
StageSpace parse_stage_options(const std::string& where, const std::string& text);
// Every stage's space: a stage named twice, or one the chain does not have, is a UsageError.
std::vector<StageSpace> stage_spaces(const std::string& pipeline, std::size_t stages,
                                     const std::vector<std::string>& given);
// Every chain of the stages' product, the accurate f32 kernel added to every stage.
std::vector<std::vector<PipelineStage>> chains_of(const std::vector<const AppDescriptor*>& apps,
                                                  const std::vector<StageSpace>& spaces);
std::string stage_label(const PipelineStage& s);
// Accurate, every element stored in f32, no output scheme: the stage of the accurate chain.
bool exact_stage(const PipelineStage& s);
// One chain's row on one input: each stage's time and error against the chained truth.
nlohmann::ordered_json chain_row(const std::string& pipeline,
                                 const std::vector<PipelineStage>& chain,
                                 const ChainOutcome& outcome, const std::string& input,
                                 const std::vector<GridD>& truth);

}  // namespace kperf
