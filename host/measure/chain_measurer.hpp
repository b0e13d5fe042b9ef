// Chains measured under the fault journal, one bound input at a time, through the measuring core:
// what kperf pipeline and kperf tune --pipeline measure with. A row an earlier measuring process
// finished is taken as it was; a chain that faults the device is a device_fault row and, in a
// supervised process, ends it for the supervisor to measure on in a new one. The truth of an
// input with user-app stages is device work of its own: a fault there makes every chain on that
// input a device_fault row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bound_input.hpp"
#include "chain.hpp"
#include "chain_rows.hpp"
#include "core.hpp"

namespace kperf {

class ChainMeasurer {
 public:
  ChainMeasurer(Core& core, TruthSource& truths, std::string pipeline,
                std::vector<const AppDescriptor*> apps);
  // Binds an input and, unless `with_truth` is false (runs that only time), its chained truth.
  void bind(const std::string& name, Grid grid, bool with_truth = true);
  const Grid& input() const { return in_.input; }
  // The row of `chain` on the bound input, measured in a tune's `stage` (and rank `round`) as
  // `mode` says.
  ChainRow measure(const Chain& chain, const std::string& stage = "",
                   std::optional<int> round = std::nullopt, MeasureMode mode = MeasureMode::kTimed);
  // --save-outputs: every chain's outputs that left the device written as .npy into `dir`.
  void save_outputs_to(std::string dir) { save_dir_ = std::move(dir); }
  // Some chain, or a truth kernel, faulted the device (in this process or an earlier one).
  bool faulted() const { return faulted_; }
  // Wall seconds spent computing the bound inputs' truths (the harness block's share of binding).
  double truth_seconds() const { return truths_.seconds(); }

 private:
  ChainRow row_of(const Chain& chain, const Measurement& m, const std::string& stage,
                  std::optional<int> round) const;
  // Writes an ok chain's outputs read back as float32 .npy: the final one into the row's
  // output_file, each earlier stage's as KEY.stageK.npy; where that fails (KPERF_FAULT=save too)
  // the chain is a host_error row that says so, its measurements kept.
  void save_outputs(Measurement& m, const std::string& key) const;
  Core& core_;
  TruthSource& truths_;
  std::string pipeline_, save_dir_;
  std::vector<const AppDescriptor*> apps_;
  BoundInput in_;
  bool faulted_ = false;
};

// Builds every program of `chains` at once on the host's threads, under the fault journal (a
// compiler crash there is no chain's: a restarted process builds each in its chain's set-up).
void prebuild_chains(ClEnv& env, Core& core, const std::vector<Chain>& chains);

// The accurate chain's best time per input (every stage exact, at the shapes that made the fastest
// such chain; of separate launches where there is one), and every ok row's speedup against it.
void add_chain_speedups(std::vector<ChainRow>& rows);
// That baseline among `rows` on `input`: the fastest ok exact chain of separate launches, or of
// fused ones where none is unfused; null where none is ok.
const ChainRow* fastest_exact(const std::vector<ChainRow>& rows, const std::string& input);

}  // namespace kperf
