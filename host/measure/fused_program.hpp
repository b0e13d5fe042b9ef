// A fused chain's program: the text that puts every stage's app file into one kernel
// (schemes/fuse_contract.cl), its build options, and why a chain cannot be fused.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "chain.hpp"
#include "cl_env.hpp"
#include "schemes.hpp"

namespace kperf {

// The halo of the fused chain's first tile: the sum of its stages' radii.
int fused_tile_halo(const std::vector<PipelineStage>& chain);

// Why `chain` cannot be fused: (0-based stage, reason), the stage -1 for the chain as a whole; a
// not_applicable row. Output schemes, load paths other than local, host perforation and relaxed
// barriers are not written for a fused chain; a later stage reads its input from local memory, so
// only the first takes an input scheme (in the rolling design, --fuse-rows, the accurate scheme
// or rows:k); the stored types connect as in the unfused chain, and the chain's own input and
// output types must be a storage precision's.
std::optional<std::pair<int, std::string>> fused_chain_problem(
    const std::vector<PipelineStage>& chain);

// Why a fusable chain cannot launch on `dev`: (0-based stage, verdict), the stage -1 for the
// launch as a whole: a stage's axes for its app (the first stage's input scheme on the fused tile,
// whose halo is every stage's radius), the launch shape, the local memory; in the rolling design
// also a strip that is not whole steps of py rows, or a group too narrow for the chain's halo.
std::optional<std::pair<int, Verdict>> check_fused_launch(const std::vector<PipelineStage>& chain,
                                                          const DeviceInfo& dev);

// The local memory a fused chain's launch needs: the first stage's tile and every earlier stage's
// outputs over the block and its halo, as fuse_contract.cl lays them out (the rolling design:
// its rings, model/fused_rows.hpp).
std::size_t fused_local_bytes(const std::vector<PipelineStage>& chain);

struct FusedProgram {
  std::string source, options;
};
// The program of a fusable chain: the contract, each stage's app file (by its name under
// kernels/ for a built-in, by its path for a user app) in the stage's view with its file-scope
// names prefixed, and the kernel; the options of the first stage's input axes, the chain's
// precision and the launch shape, the rolling design's strip height (-DKPERF_FUSE_ROWS=H, with
// its own contract, stage and kernel files: schemes/fuse_roll*.cl), every app's parameters,
// `extra_options` (--cl-options) last.
FusedProgram fused_program(const std::vector<PipelineStage>& chain, const std::string& kernel_root,
                           const AppParams& params, const std::string& extra_options);

// The names an app's text declares at file scope (functions, variables, types), outside comments
// and preprocessor lines, but names that begin with "__", "kperf_" or "KPERF_" and those the text
// #defines: what a fused program prefixes per stage.
std::vector<std::string> file_scope_names(const std::string& text);
// The macros an app's text #defines (object-like and function-like).
std::vector<std::string> defined_macros(const std::string& text);

}  // namespace kperf
