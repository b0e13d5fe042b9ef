// The CPU model of a fused chain (schemes/fuse_contract.cl, docs/pipelines.md): per work-group,
// the first stage's tile of the launch's block with a halo of every stage's radius, loaded and
// rebuilt by its input scheme as model_run's tiles are; then each stage's outputs over the block
// plus the halo of the stages after it, replicated past the grid's edge (as the unfused chain reads
// its intermediate buffer, clamped) and rounded to the stage's stored output type; the last
// stage's over the block are the chain's outputs.
#include "fused_model.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "kernel_axes.hpp"
#include "storage.hpp"

namespace kperf {

namespace {

// One group's region of one stage: its outputs (or, for the first stage's input, the tile) over
// the block with a halo, and where its element (0, 0) lies in the grid.
struct Region {
  TileD values;
  int y0 = 0, x0 = 0;
};

// Stage `app`'s outputs over `halo` past the block, from every group's input region (a halo of
// halo + app.radius), by its point function or, for a user app, one evaluation of all regions
// stacked (each output's window lies inside its own region).
std::vector<Region> stage_outputs(const AppDescriptor& app, const Variant& v,
                                  const std::vector<Region>& inputs, int halo, WorkGroup block,
                                  const AppParams& params, const GridEvaluator& evaluate) {
  const int r = app.radius;
  std::vector<Region> out(inputs.size());
  std::optional<GridD> evaluated;
  if (!app.point) {
    if (!evaluate) throw std::logic_error("fused_model_run: " + app.name + " needs an evaluator");
    const TileD& first = inputs.front().values;
    GridD stacked(first.w, first.h * static_cast<int>(inputs.size()));
    for (std::size_t g = 0; g < inputs.size(); ++g)
      std::copy(inputs[g].values.v.begin(), inputs[g].values.v.end(),
                stacked.data.begin() + static_cast<long>(g * first.v.size()));
    evaluated = evaluate(stacked);
  }
  PointArgs args;
  args.params = &params;
  apply_kernel_axes(v, args);
  for (std::size_t g = 0; g < inputs.size(); ++g) {
    const TileD& in = inputs[g].values;
    const double* base = in.v.data();
    Region& o = out[g];
    o.y0 = inputs[g].y0 + r;
    o.x0 = inputs[g].x0 + r;
    o.values = TileD{block.y + 2 * halo, block.x + 2 * halo, {}};
    o.values.v.resize(static_cast<std::size_t>(o.values.h) * o.values.w);
    for (int y = 0; y < o.values.h; ++y)
      for (int x = 0; x < o.values.w; ++x)
        o.values.at(y, x) = evaluated
                                ? evaluated->at(static_cast<int>(g) * in.h + y + r, x + r)
                                : app.point(Window{base + (y + r) * in.w + x + r, in.w}, args);
  }
  return out;
}

// Past the grid's edge a region holds the grid's edge's outputs; every output rounded to `type`.
void replicate_and_round(Region& region, int width, int height, const StorageType& type) {
  TileD& t = region.values;
  for (int y = 0; y < t.h; ++y)
    for (int x = 0; x < t.w; ++x) {
      const int cy = std::clamp(region.y0 + y, 0, height - 1) - region.y0;
      const int cx = std::clamp(region.x0 + x, 0, width - 1) - region.x0;
      t.at(y, x) = t.at(cy, cx);
    }
  if (!type.is_float())
    for (double& x : t.v) x = type.round(x);
}

}  // namespace

GridD fused_model_run(const std::vector<const AppDescriptor*>& apps,
                      const std::vector<Variant>& variants, WorkGroup launch, const GridD& input,
                      const AppParams& params, const std::vector<GridEvaluator>& evaluators) {
  const int w = input.width, h = input.height, n = static_cast<int>(apps.size());
  std::vector<int> halo(static_cast<std::size_t>(n), 0);  // past the block, after stage k
  for (int k = n - 2; k >= 0; --k) halo[k] = halo[k + 1] + apps[k + 1]->radius;
  const int tile_halo = halo[0] + apps[0]->radius;
  const WorkGroup block = launch.block();
  const Variant& first = variants[0];
  const StorageType& in_type = *first.precision_info().in;
  GridD stored = input;
  for (double& x : stored.data) x = in_type.round(static_cast<double>(static_cast<float>(x)));
  const int groups_x = (w + block.x - 1) / block.x, groups_y = (h + block.y - 1) / block.y;
  std::vector<Region> regions;
  for (int gy = 0; gy < groups_y; ++gy)
    for (int gx = 0; gx < groups_x; ++gx) {
      const TileGeometry g{block, tile_halo, first.skip, gx, gy};
      Region tile{TileD{g.tile_h(), g.tile_w(), {}}, g.global_y(0), g.global_x(0)};
      // Elements that are not loaded start as NaN so a model bug cannot go unnoticed.
      tile.values.v.assign(static_cast<std::size_t>(g.tile_h()) * g.tile_w(),
                           std::numeric_limits<double>::quiet_NaN());
      for (int ty = 0; ty < g.tile_h(); ++ty) {
        if (!first.scheme->loads(Axis::kY, g, ty)) continue;
        for (int tx = 0; tx < g.tile_w(); ++tx)
          if (first.scheme->loads(Axis::kX, g, tx))
            tile.values.at(ty, tx) = stored.at(std::clamp(g.global_y(ty), 0, h - 1),
                                               std::clamp(g.global_x(tx), 0, w - 1));
      }
      first.scheme->reconstruct(g, first.recon, tile.values);
      regions.push_back(std::move(tile));
    }
  for (int k = 0; k < n; ++k) {
    regions = stage_outputs(
        *apps[k], variants[k], regions, halo[k], block, params,
        static_cast<std::size_t>(k) < evaluators.size() ? evaluators[k] : GridEvaluator{});
    for (Region& region : regions)
      replicate_and_round(region, w, h, *variants[k].precision_info().out);
  }
  GridD out(w, h);
  for (const Region& region : regions)
    for (int y = 0; y < block.y; ++y)
      for (int x = 0; x < block.x; ++x)
        if (region.y0 + y < h && region.x0 + x < w)
          out.at(region.y0 + y, region.x0 + x) = region.values.at(y, x);
  return out;
}

std::vector<GridD> chain_model(const Chain& chain, const Grid& input, const AppParams& params,
                               const std::vector<GridEvaluator>& evaluators) {
  std::vector<GridD> models;
  GridD current = to_double(input.data, input.width, input.height);
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    // The stage reads its input at its input type; the model holds the value the buffer holds.
    const StorageType& in = *s.variant.precision_info().in;
    for (double& x : current.data) x = in.round(static_cast<double>(static_cast<float>(x)));
    current = model_run(*s.app, s.variant, s.wg, current, nullptr, 1, params,
                        k < evaluators.size() ? evaluators[k] : GridEvaluator{});
    models.push_back(current);
  }
  return models;
}

GridD rolling_chain_model(const Chain& chain, const Grid& input, const AppParams& params,
                          const std::vector<GridEvaluator>& evaluators) {
  Chain separate = chain;
  for (PipelineStage& s : separate) s = {s.app, s.variant, s.wg};
  separate.front().wg = WorkGroup{input.width, 1, 1, input.height};
  return chain_model(separate, input, params, evaluators).back();
}

GridD fused_chain_model(const Chain& chain, const Grid& input, const AppParams& params,
                        const std::vector<GridEvaluator>& evaluators) {
  std::vector<const AppDescriptor*> apps;
  std::vector<Variant> variants;
  for (const PipelineStage& s : chain) {
    apps.push_back(s.app);
    variants.push_back(s.variant);
  }
  return fused_model_run(apps, variants, chain.back().wg,
                         to_double(input.data, input.width, input.height), params, evaluators);
}

}  // namespace kperf
