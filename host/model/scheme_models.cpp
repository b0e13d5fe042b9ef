// The CPU models of SPEC 3, 4 and 10: what a configuration computes (model_run, tile by tile in
// double precision) and which input elements its groups read (the poisoning tests' oracle).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernel_axes.hpp"
#include "schemes.hpp"
#include "storage.hpp"
#include "structural_axes.hpp"

namespace kperf {

OutputSource output_source(int p, int n, int k, Recon recon) {
  const int m = (n - k / 2 + k - 1) / k;  // computed lines inside the grid
  auto pos = [&](int j) { return j * k + k / 2; };
  int ja = p >= k / 2 ? std::min((p - k / 2) / k, m - 1) : -1;
  int jb = (ja >= 0 && pos(ja) == p) ? ja : ja + 1;
  if (jb >= m) jb = ja;
  if (ja < 0) ja = jb;
  if (ja == jb) return {pos(ja), pos(ja), 0.0};
  const int da = p - pos(ja), db = pos(jb) - p;
  if (recon == Recon::kLi) return {pos(ja), pos(jb), static_cast<double>(da) / (da + db)};
  return da <= db ? OutputSource{pos(ja), pos(ja), 0.0} : OutputSource{pos(jb), pos(jb), 0.0};
}

namespace {

// Tiles of a user app waiting for one evaluation, stacked in a grid; each computed output
// remembers where its window's centre sits there.
class TileBatch {
 public:
  TileBatch(const GridEvaluator& evaluate, int tile_h, int tile_w, int radius)
      : evaluate_(evaluate), tile_h_(tile_h), tile_w_(tile_w), radius_(radius) {}
  void add_tile(const TileD& tile) {
    stacked_.insert(stacked_.end(), tile.v.begin(), tile.v.end());
    ++tiles_;
  }
  void add_output(double* dest, int ly, int lx) {
    pending_.push_back({dest, (tiles_ - 1) * tile_h_ + ly + radius_, lx + radius_});
  }
  bool full() const { return tiles_ >= kTilesPerBatch; }
  void flush() {
    if (tiles_ == 0) return;
    GridD grid(tile_w_, tiles_ * tile_h_);
    grid.data = std::move(stacked_);
    const GridD out = evaluate_(grid);
    for (const Pending& p : pending_) *p.dest = out.at(p.y, p.x);
    stacked_.clear();
    pending_.clear();
    tiles_ = 0;
  }

 private:
  static constexpr int kTilesPerBatch = 4096;  // bounds the stacked grid's memory
  struct Pending {
    double* dest;
    int y, x;
  };
  const GridEvaluator& evaluate_;
  int tile_h_, tile_w_, radius_;
  int tiles_ = 0;
  std::vector<double> stacked_;
  std::vector<Pending> pending_;
};

}  // namespace

GridD model_run(const AppDescriptor& app, const Variant& v, WorkGroup wg, const GridD& input,
                const GridD* power, int iterations, const AppParams& params,
                const GridEvaluator& evaluate) {
  if (!app.point && !evaluate)
    throw std::logic_error("model_run: " + app.name + " needs an evaluator (a user app)");
  const WorkGroup block = block_of(v, wg);
  const int ky = v.output.ky(), kx = v.output.kx();
  const int w = input.width, h = input.height, r = app.radius;
  const HotspotCoefficients coef = hotspot_coefficients(w, h);
  const int groups_x = (w + block.x - 1) / block.x, groups_y = (h + block.y - 1) / block.y;
  // Stored precision: inputs (and power) rounded to their storage; outputs rounded when stored
  // (computed ones before the fill pass reads them, filled ones after). Float storage is the
  // float input itself: nothing to round.
  const StorageType& in_type = *v.precision_info().in;
  const StorageType& out_type = *v.precision_info().out;
  const bool in_rounds = !in_type.is_float(), out_rounds = !out_type.is_float();
  auto to_storage = [](GridD g, const StorageType& type) {
    for (double& x : g.data) x = type.round(x);
    return g;
  };
  GridD current = in_rounds ? to_storage(input, in_type) : input;
  std::optional<GridD> power_stored;
  if (power && in_rounds) power = &power_stored.emplace(to_storage(*power, in_type));
  TileD tile{block.y + 2 * r, block.x + 2 * r, {}};
  tile.v.resize(static_cast<std::size_t>(tile.h) * tile.w);
  // Per block, (block.y / ky) x (block.x / kx) computed outputs.
  const int cy_n = block.y / ky, cx_n = block.x / kx;
  const int steps = app.traits.iterated
                        ? effective_iterations(std::max(1, iterations), v.iterations_skip)
                        : std::max(1, iterations);
  for (int it = 0; it < steps; ++it) {
    GridD next(w, h);
    TileBatch batch(evaluate, tile.h, tile.w, r);
    for (int gy = 0; gy < groups_y; ++gy)
      for (int gx = 0; gx < groups_x; ++gx) {
        const TileGeometry g{block, r, v.skip, gx, gy};
        // Elements that are not loaded start as NaN so a model bug cannot go unnoticed.
        std::fill(tile.v.begin(), tile.v.end(), std::numeric_limits<double>::quiet_NaN());
        for (int ty = 0; ty < tile.h; ++ty) {
          if (!v.scheme->loads(Axis::kY, g, ty)) continue;
          for (int tx = 0; tx < tile.w; ++tx)
            if (v.scheme->loads(Axis::kX, g, tx))
              tile.at(ty, tx) = current.at(std::clamp(g.global_y(ty), 0, h - 1),
                                           std::clamp(g.global_x(tx), 0, w - 1));
        }
        v.scheme->reconstruct(g, v.recon, tile);
        // The computed outputs of this block: line j of the block's work-items sits at
        // k * j + k / 2 of the block (past the grid's end in a final partial period: none).
        const int y0 = gy * block.y, x0 = gx * block.x;
        if (!app.point) {
          if (batch.full()) batch.flush();
          batch.add_tile(tile);
        }
        for (int cy = 0; cy < cy_n; ++cy)
          for (int cx = 0; cx < cx_n; ++cx) {
            const int ly = cy * ky + ky / 2, lx = cx * kx + kx / 2;
            if (y0 + ly >= h || x0 + lx >= w) continue;
            if (!app.point) {
              batch.add_output(&next.at(y0 + ly, x0 + lx), ly, lx);
              continue;
            }
            PointArgs args;
            args.hotspot = &coef;
            args.params = &params;
            apply_kernel_axes(v, args);
            if (power) args.power = power->at(y0 + ly, x0 + lx);
            next.at(y0 + ly, x0 + lx) = app.point(Window{&tile.at(ly + r, lx + r), tile.w}, args);
          }
      }
    batch.flush();
    if (out_rounds) next = to_storage(std::move(next), out_type);
    // The fill pass: every other output from the computed ones, over the whole grid.
    if (ky > 1 || kx > 1) {
      const Recon recon = v.output_recon == Recon::kLi ? Recon::kLi : Recon::kNn;
      GridD filled = next;
      for (int y = 0; y < h; ++y) {
        const OutputSource sy = output_source(y, h, ky, recon);
        for (int x = 0; x < w; ++x) {
          if (y % ky == ky / 2 && x % kx == kx / 2) continue;
          const OutputSource sx = output_source(x, w, kx, recon);
          const double top =
              next.at(sy.a, sx.a) + sx.w * (next.at(sy.a, sx.b) - next.at(sy.a, sx.a));
          const double bottom =
              next.at(sy.b, sx.a) + sx.w * (next.at(sy.b, sx.b) - next.at(sy.b, sx.a));
          filled.at(y, x) = top + sy.w * (bottom - top);
        }
      }
      next = out_rounds ? to_storage(std::move(filled), out_type) : std::move(filled);
    }
    current = std::move(next);
  }
  return current;
}

namespace {

// The tile geometry of group (group_x, group_y): its block, and where the blocks overlap, the
// step between blocks and the first block's shift (kperf_block_y0 / kperf_block_x0).
TileGeometry group_geometry(const Variant& v, int radius, WorkGroup wg, int group_x, int group_y) {
  TileGeometry g{block_of(v, wg), radius, v.skip, group_x, group_y};
  if (blocks_overlap_y(v, wg)) g.step_y = group_step_y(v, wg);
  if (blocks_overlap_x(v, wg)) {
    g.shift_x = -block_x0(v, wg, 0);
    g.step_x = block_x0(v, wg, 1) + g.shift_x;
  }
  return g;
}

// Marks, per axis, the global lines (clamped) that group `group` reads.
void mark_lines(const Variant& v, Axis axis, const TileGeometry& g, int extent, int size,
                std::vector<char>& mark) {
  if (axis == Axis::kY && v.is_accurate() && v.output.ky() > 1) {
    // Only the windows of computed rows (scheme_accurate.cl), every one of the block's and,
    // under a one-launch li fill, the next block's first, which the group reads too.
    const int k = v.output.ky();
    const bool next = v.output_recon == Recon::kLi && v.fill().launches == 1 && !g.step_y;
    for (int c = k / 2; c < g.wg.y + (next ? k : 0); c += k)
      for (int d = 0; d <= 2 * g.radius; ++d)
        mark[static_cast<std::size_t>(std::clamp(g.global_y(c + d), 0, size - 1))] = 1;
    return;
  }
  for (int t = 0; t < extent; ++t)
    if (v.scheme->loads(axis, g, t)) {
      const int global = axis == Axis::kY ? g.global_y(t) : g.global_x(t);
      mark[static_cast<std::size_t>(std::clamp(global, 0, size - 1))] = 1;
    }
}

}  // namespace

std::vector<char> elements_read_by_group(const Variant& v, int radius, WorkGroup wg, int width,
                                         int height, int group_x, int group_y) {
  const TileGeometry g = group_geometry(v, radius, wg, group_x, group_y);
  std::vector<char> rows(static_cast<std::size_t>(height), 0),
      cols(static_cast<std::size_t>(width), 0);
  mark_lines(v, Axis::kY, g, g.tile_h(), height, rows);
  mark_lines(v, Axis::kX, g, g.tile_w(), width, cols);
  std::vector<char> mask(static_cast<std::size_t>(width) * height, 0);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      mask[static_cast<std::size_t>(y) * width + x] = rows[y] && cols[x];
  return mask;
}

namespace {

// Lines read by any group along one axis (separable schemes: rows depend on group_y only).
std::vector<char> lines_read_by_any(const Variant& v, Axis axis, int radius, WorkGroup wg,
                                    int size) {
  const int groups = axis == Axis::kY ? groups_along_y(v, wg, size) : groups_along_x(v, wg, size);
  std::vector<char> mark(static_cast<std::size_t>(size), 0);
  for (int grp = 0; grp < groups; ++grp) {
    const TileGeometry g =
        group_geometry(v, radius, wg, axis == Axis::kX ? grp : 0, axis == Axis::kY ? grp : 0);
    mark_lines(v, axis, g, axis == Axis::kY ? g.tile_h() : g.tile_w(), size, mark);
  }
  return mark;
}

}  // namespace

std::vector<char> elements_read_by_any(const Variant& v, int radius, WorkGroup wg, int width,
                                       int height) {
  const auto rows = lines_read_by_any(v, Axis::kY, radius, wg, height);
  const auto cols = lines_read_by_any(v, Axis::kX, radius, wg, width);
  std::vector<char> mask(static_cast<std::size_t>(width) * height, 0);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      mask[static_cast<std::size_t>(y) * width + x] = rows[y] && cols[x];
  return mask;
}

double distinct_elements_read(const Variant& v, int radius, WorkGroup wg, int width, int height) {
  const auto rows = lines_read_by_any(v, Axis::kY, radius, wg, height);
  const auto cols = lines_read_by_any(v, Axis::kX, radius, wg, width);
  return static_cast<double>(std::count(rows.begin(), rows.end(), 1)) *
         static_cast<double>(std::count(cols.begin(), cols.end(), 1));
}

}  // namespace kperf
