// The chain tuner (kperf tune --pipeline): one end-to-end error budget over a chain's per-stage
// product space. Every chain is timed and judged on the first training input (the screen); those
// near the largest budget are measured on every training input; the front of time against
// training error is kept; each budget's finalists are timed again in interleaved rounds (the rank
// stage) and the stable rule chooses (choice.hpp), checked on the held-out inputs, beside the best
// uniform chain and the best chain approximating its costliest stage alone.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chain_measurer.hpp"
#include "choice.hpp"
#include "inputs.hpp"
#include "tune.hpp"

namespace kperf {

// One stage's configurations: its variants (the product of its axes) at its launch shapes.
struct StageSpace {
  std::vector<Variant> variants;
  std::vector<WorkGroup> shapes;
  bool shapes_given = false;  // --wg, --vec or --py named them (else the device's defaults)
};

// Every chain of the stages' product, the accurate f32 kernel added to every stage, for each value
// of `fuse`: separate launches (false), every stage at each of its shapes; or one fused launch
// (true) at each shape of the last stage (every stage's wg then that shape), once per value of
// `fuse_rows` (0 the tile design, H the rolling design in strips of H rows).
std::vector<Chain> chains_of(const std::vector<const AppDescriptor*>& apps,
                             const std::vector<StageSpace>& spaces,
                             const std::vector<bool>& fuse = {false},
                             const std::vector<int>& fuse_rows = {0});

// What the chain tuner is asked.
struct ChainTuneRequest {
  std::vector<double> budgets;  // ascending
  double percentile = 95, tie_tolerance = 0.015;
  std::vector<ImageSource> train, test;
  std::optional<std::pair<int, int>> size;  // none: every input at its own size
};

// A measured chain as the search ranks it.
struct ChainCandidate {
  std::size_t chain = 0;  // into the searched chains
  double time = 0;        // the screen's median
  double error = 0;       // the percentile final error over the training inputs
  std::vector<double> train_errors;
  ChainRow screen_row;
  std::optional<double> rank_time;  // the median of its rank samples, where it was a finalist
};

// What the chain tuner found that --select canary's ladders are made of.
struct ChainLadderInput {
  const std::vector<Chain>* chains = nullptr;
  std::vector<std::size_t> measured;  // the measured chains, indices into `chains`
  std::vector<FrontPoint> points;     // their screen times and training errors
  // Per budget, the static choice (an index into `measured`), none where nothing was chosen.
  std::vector<std::optional<std::size_t>> chosen;
  std::optional<std::size_t> accurate;  // the accurate chain, an index into `chains`
  std::vector<double> budgets;
  double percentile = 95;
  std::vector<ImageSource> test;
  std::optional<std::pair<int, int>> size;
};

// The search's state: every chain's rows, the candidates the screen passed and the measured ones.
class ChainSearch {
 public:
  ChainSearch(ChainMeasurer& m, const std::vector<Chain>& chains, const ChainTuneRequest& req)
      : m_(m), chains_(chains), req_(req) {}
  void screen();
  void measure();
  void rank();
  // Per budget the choice, its finalists, its best uniform and costliest-stage-alone chains and
  // the held-out verdict.
  nlohmann::ordered_json choices();
  nlohmann::ordered_json front() const;
  nlohmann::ordered_json measured_json() const;
  std::vector<ChainRow>& rows() { return rows_; }
  double load_seconds() const { return load_s_; }
  std::size_t measured_count() const { return measured_.size(); }
  // The stage with the most time in the accurate baseline chain (0 where that chain is fused).
  std::size_t costliest_stage() const;
  // After choices(): what --select canary's ladders are made of.
  ChainLadderInput ladder_input() const;
  // The method in words, for the context.
  static const char* method();

 private:
  const ChainCandidate* fastest_within(
      double budget, const std::function<bool(const ChainCandidate&)>& admit) const;
  std::vector<const ChainCandidate*> finalists(double budget) const;
  nlohmann::ordered_json candidate_json(const ChainCandidate& c) const;
  // The held-out errors of every chosen chain, one input bound at a time.
  std::map<std::size_t, std::pair<std::vector<HeldOutError>, std::string>> held_out();
  Grid load(const ImageSource& src);

  ChainMeasurer& m_;
  const std::vector<Chain>& chains_;
  const ChainTuneRequest& req_;
  std::vector<ChainRow> rows_;
  std::vector<ChainCandidate> screened_, measured_;
  std::optional<std::size_t> base_;  // the fastest exact chain of the screen (into screened_)
  std::optional<double> base_rank_time_;
  std::map<double, const ChainCandidate*> chosen_;  // per budget, by choices()
  double load_s_ = 0;
};

}  // namespace kperf
