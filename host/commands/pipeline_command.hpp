// kperf pipeline and kperf tune --pipeline: chains of image apps, each stage at its own
// approximation (docs/pipelines.md); what the two commands read alike.
#pragma once

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chain_tune.hpp"
#include "core.hpp"
#include "tune_session.hpp"

namespace kperf {

int cmd_pipeline(int argc, char** argv, const std::string& command_line);
// kperf tune --pipeline: one end-to-end budget over the chain's per-stage product space.
int cmd_tune_pipeline(int argc, char** argv, const std::string& command_line);

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
// --fuse's list: none, all, or both, each once.
std::vector<bool> parse_fuse_list(const std::string& text);
// --fuse-rows' list: strip heights (0: the tile design), each once.
std::vector<int> parse_fuse_rows_list(const std::string& text);

}  // namespace kperf
