// Per-input selection (SPEC 15, kperf tune --select canary): a canary built from one input
// estimates a configuration's error on the whole input from a stratified sample of its
// work-group tiles, each computed at full resolution by the CPU model (model_groups) beside the
// accurate model of the same tiles, with a one-sided upper confidence bound from the spread of
// the tiles' errors. A chain of apps is modelled stage by stage over the region its sampled
// tiles depend on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "chain_stage.hpp"
#include "io.hpp"
#include "metrics.hpp"
#include "schemes.hpp"

namespace kperf {

struct CanarySettings {
  double fraction = 0.001;  // of a launch's tiles (--canary-fraction)
  // At least this many (--canary-tiles; all of them on a smaller grid): on 8 photos at 2048^2,
  // 5 apps and 5 configurations, the bound held for 180 of 200 with 128 tiles, 185 with 512.
  int min_tiles = 128;
  double confidence = 0.95;  // of the one-sided upper bound (--canary-confidence)
};

// One stage of what a canary models: an app at a variant and launch shape.
using CanaryStage = PipelineStage;

// Why the canary cannot model a stage (nothing when it can): a racing variant (the model keeps
// the barrier a relaxed one drops), an iterated app or one with a second input, a stage of a fused
// chain (the canary models each stage in its own launch, over its own tile; the fused kernel's
// first tile carries every stage's halo, so the estimate would be of another computation).
std::optional<std::string> canary_problem(const CanaryStage& stage);

// The estimate of a whole-grid error from sampled tiles.
struct CanaryEstimate {
  double estimate = 0;  // the app's primary metric over the sampled windows
  double margin = 0;    // estimate + margin: the one-sided upper bound at the confidence
  int tiles = 0;
  double population = 0;      // windows the launch's blocks hold
  std::int64_t elements = 0;  // outputs compared
  double fraction = 0;        // elements over the grid's
  double upper() const { return estimate + margin; }
};

// The lattice canary_groups draws on: a launch's groups_x x groups_y groups cut into cells_x x
// cells_y cells, cell (cy, cx) spanning groups [cy * groups_y / cells_y, (cy + 1) * groups_y /
// cells_y) along y and likewise along x; one group is drawn in each, in row-major cell order.
// Every group is its own cell when the sample takes them all. The device canary draws the same
// groups from it on the device (schemes/groups_sampled.cl).
struct CanaryLattice {
  int groups_x = 0, groups_y = 0, cells_x = 0, cells_y = 0;
};
CanaryLattice canary_lattice(int groups_x, int groups_y, int count);
// The 16 bits of a sample's seed that draw its groups: what a launch's global offset carries to
// the device canary's kernels (PoCL 3.1 reads bits 16 and up of an offset as 0). The windows in
// the groups are drawn from the whole seed.
std::uint16_t canary_group_key(std::uint64_t seed);

// What a canary compares of one launch: a window of at most kWindowX x kWindowY outputs in each
// sampled group's block (the whole tile is filled and reconstructed as the kernel does; only the
// window's outputs are computed), one of the slots of that size the block is cut into.
struct CanarySample {
  static constexpr int kWindowX = 16, kWindowY = 8;
  std::vector<std::pair<int, int>> groups;  // (gy, gx)
  std::vector<BlockRect> windows;           // one per group
  double population = 0;                    // slots the launch's blocks hold
  CanaryLattice lattice;                    // the groups', one per cell
};
// The sample of a width x height launch of `block`s: enough windows for `fraction` of the
// outputs, at least min_tiles of them, at most one per group (canary_groups), every group's
// window drawn with a generator seeded by `seed`.
CanarySample canary_sample(int width, int height, WorkGroup block, const CanarySettings& s,
                           std::uint64_t seed);
// The sampled groups (gy, gx) of a groups_x x groups_y launch: one in each cell of a lattice of
// about `count` nearly square cells of groups (canary_lattice), drawn with a generator seeded by
// canary_group_key(seed) (the same on every platform); every group when count reaches their
// number.
std::vector<std::pair<int, int>> canary_groups(int groups_x, int groups_y, int count,
                                               std::uint64_t seed);
// Quantiles of the standard normal and of Student's t with `df` degrees of freedom (p in (0, 1)).
double normal_quantile(double p);
double student_t_quantile(double p, double df);
// The whole-grid metric estimated from per-window sums (ErrorSums of each sampled window: rel
// and n_rel for MRE, abs and n for ME, the window's truth range in min_t/max_t) out of
// `population` windows: the ratio estimator (the metric is a mean over elements, and the
// windows' counts differ at the grid's edges and for near-zero truths) with its standard error
// for a simple random sample without replacement; ME is normalised by the sampled truth's range,
// no wider than the whole truth's, so ME is overstated rather than understated. The margin is 0
// when the sample is the population, and +infinity (the rung refused) when the sample carries
// no information: fewer than two windows with an element the metric counts (MRE: above its
// near-zero threshold), or for ME a sampled truth without range.
CanaryEstimate estimate_from_tiles(Metric metric, const std::vector<ErrorSums>& tiles,
                                   double population, double confidence);

// The canaries of one input: every chain it is asked about is modelled on its own sample of the
// last stage's tiles, and the accurate model of the same tiles is kept for the next chain of the
// same tiling (the ladder's rungs share it).
class InputCanary {
 public:
  // `evaluators`: per stage position, a user app's (model_run's); built-ins need none.
  InputCanary(const Grid& input, const CanarySettings& settings, std::uint64_t seed,
              const AppParams& params = {}, std::vector<GridEvaluator> evaluators = {});
  // The chain's error (its last app's primary metric) on the whole input. Throws
  // std::invalid_argument when canary_problem() names a stage.
  CanaryEstimate estimate(const std::vector<CanaryStage>& chain);

 private:
  const Grid& input_;
  CanarySettings settings_;
  std::uint64_t seed_;
  AppParams params_;
  std::vector<GridEvaluator> evaluators_;
  std::map<std::string, GroupOutputs> truths_;  // by the chain's apps and blocks
  // The last stage's outputs in the sample's windows, each stage modelled over what the next
  // one reads.
  GroupOutputs run_chain(const std::vector<CanaryStage>& chain, const CanarySample& sample,
                         bool truth);
};

// A stable 64-bit seed from a name (FNV-1a): an input's canary samples the same tiles in every run.
std::uint64_t canary_seed(const std::string& name);

}  // namespace kperf
