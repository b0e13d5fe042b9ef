// The CPU model of a fused chain: what one launch computing a chain of image apps stage after
// stage in local memory (schemes/fuse_contract.cl) outputs, tile by tile in double precision.
#pragma once

#include <vector>

#include "apps.hpp"
#include "chain_stage.hpp"
#include "io.hpp"
#include "schemes.hpp"

namespace kperf {

// The outputs of the fused chain of `apps` (each under its variant) launched at `launch` (the
// last stage's block) on `input`: per work-group, the first stage's tile of the block with a
// halo of every stage's radius, loaded and rebuilt by the first stage's input scheme (whose
// kept lines are that tile's), each stage's outputs over the block plus the later stages' radii,
// past the grid's edge those of the edge, rounded to the stage's stored output type. A user app's
// stage needs its evaluator (model_run's), by stage.
GridD fused_model_run(const std::vector<const AppDescriptor*>& apps,
                      const std::vector<Variant>& variants, WorkGroup launch, const GridD& input,
                      const AppParams& params = {},
                      const std::vector<GridEvaluator>& evaluators = {});

// The chained CPU models: each stage's model_run on the previous model's output rounded to the
// stored intermediate type, as the device hands it on. A user app's stage needs its evaluator
// (model_run's), by stage.
std::vector<GridD> chain_model(const Chain& chain, const Grid& input, const AppParams& params = {},
                               const std::vector<GridEvaluator>& evaluators = {});

// The CPU model of a fused chain's output (fused_model_run), a user app's stage evaluated by its
// evaluator, by stage.
GridD fused_chain_model(const Chain& chain, const Grid& input, const AppParams& params = {},
                        const std::vector<GridEvaluator>& evaluators = {});

// The CPU model of a rolling fused chain's output (schemes/fuse_roll.cl): the chained models of
// its stages in separate launches (chain_model) with the first stage's block as tall and wide as
// the grid, so that its rows:k keeps rows by global coordinates and rebuilds them from the grid's
// kept rows and its halo, with no tile edge inside the grid (the later stages are accurate, the
// same at any shape).
GridD rolling_chain_model(const Chain& chain, const Grid& input, const AppParams& params = {},
                          const std::vector<GridEvaluator>& evaluators = {});

}  // namespace kperf
