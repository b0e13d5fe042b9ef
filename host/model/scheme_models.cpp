// The CPU models of SPEC 3, 4 and 10: what a configuration computes (model_run, tile by tile in
// double precision) and which input elements its groups read (the poisoning tests' oracle).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "kernel_axes.hpp"
#include "parallel.hpp"
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

namespace {

// What computing one block of outputs needs besides its tile: the app, the variant, the launch's
// block, the grid's size, and the point function's arguments.
struct BlockPass {
  const AppDescriptor& app;
  const Variant& v;
  WorkGroup block;
  int width, height;
  HotspotCoefficients coef;
  const AppParams& params;
};

// Group (gx, gy)'s tile as the variant fills it: the loaded elements from read(y, x) (clamped
// to the grid), the others rebuilt by the scheme. Elements that are not loaded start as NaN so a
// model bug cannot go unnoticed.
// With `need` (tile coordinates) only the elements there are loaded: those a window of the block
// reads, whatever the scheme rebuilds them from lying there too.
template <typename Read>
TileGeometry fill_tile(const BlockPass& p, int gx, int gy, TileD& tile, const Read& read,
                       const BlockRect* need = nullptr) {
  const TileGeometry g{p.block, p.app.radius, p.v.skip, gx, gy};
  const BlockRect all{0, tile.h, 0, tile.w};
  const BlockRect& rect = need ? *need : all;
  std::fill(tile.v.begin(), tile.v.end(), std::numeric_limits<double>::quiet_NaN());
  // Per column, the global column it loads (-1: none), asked of the scheme once per tile.
  thread_local std::vector<int> columns;
  columns.assign(static_cast<std::size_t>(tile.w), -1);
  for (int tx = rect.x0; tx < rect.x1; ++tx)
    if (p.v.scheme->loads(Axis::kX, g, tx))
      columns[tx] = std::clamp(g.global_x(tx), 0, p.width - 1);
  for (int ty = rect.y0; ty < rect.y1; ++ty) {
    if (!p.v.scheme->loads(Axis::kY, g, ty)) continue;
    const int y = std::clamp(g.global_y(ty), 0, p.height - 1);
    double* row = &tile.at(ty, 0);
    for (int tx = 0; tx < tile.w; ++tx)
      if (columns[tx] >= 0) row[tx] = read(y, columns[tx]);
  }
  p.v.scheme->reconstruct(g, p.v.recon, tile);
  return g;
}

// The computed outputs of group (gx, gy)'s block from its filled tile, each into dest(y, x): a
// point app's at once, a user app's queued on `batch` (the tile was added to it). Line j of the
// block's work-items sits at k * j + k / 2 of the block (past the grid's end in a final partial
// period: none).
template <typename Dest>
void compute_block(const BlockPass& p, int gx, int gy, const TileD& tile, const GridD* power,
                   TileBatch& batch, const Dest& dest, const BlockRect* rect = nullptr) {
  const int ky = p.v.output.ky(), kx = p.v.output.kx(), r = p.app.radius;
  const int y0 = gy * p.block.y, x0 = gx * p.block.x;
  // The computed lines cy * k + k / 2 inside the rectangle (the whole block without one).
  const BlockRect all{0, p.block.y, 0, p.block.x};
  const BlockRect& in = rect ? *rect : all;
  auto first = [](int from, int k) { return std::max(0, (from - k / 2 + k - 1) / k); };
  const int cy0 = first(in.y0, ky), cy1 = std::min(p.block.y / ky, first(in.y1, ky));
  const int cx0 = first(in.x0, kx), cx1 = std::min(p.block.x / kx, first(in.x1, kx));
  for (int cy = cy0; cy < cy1; ++cy)
    for (int cx = cx0; cx < cx1; ++cx) {
      const int ly = cy * ky + ky / 2, lx = cx * kx + kx / 2;
      if (y0 + ly >= p.height || x0 + lx >= p.width) continue;
      if (!p.app.point) {
        batch.add_output(dest(y0 + ly, x0 + lx), ly, lx);
        continue;
      }
      PointArgs args;
      args.hotspot = &p.coef;
      args.params = &p.params;
      apply_kernel_axes(p.v, args);
      if (power) args.power = power->at(y0 + ly, x0 + lx);
      *dest(y0 + ly, x0 + lx) = p.app.point(
          Window{tile.v.data() + static_cast<std::size_t>(ly + r) * tile.w + lx + r, tile.w}, args);
    }
}

// Output (y, x) rebuilt by the output scheme's fill from the computed outputs, read by at(y, x).
template <typename At>
double filled_output(const Variant& v, int width, int height, int y, int x, const At& at) {
  const int ky = v.output.ky(), kx = v.output.kx();
  const Recon recon = v.output_recon == Recon::kLi ? Recon::kLi : Recon::kNn;
  const OutputSource sy = output_source(y, height, ky, recon);
  const OutputSource sx = output_source(x, width, kx, recon);
  const double top = at(sy.a, sx.a) + sx.w * (at(sy.a, sx.b) - at(sy.a, sx.a));
  const double bottom = at(sy.b, sx.a) + sx.w * (at(sy.b, sx.b) - at(sy.b, sx.a));
  return top + sy.w * (bottom - top);
}

bool is_computed(const Variant& v, int y, int x) {
  const int ky = v.output.ky(), kx = v.output.kx();
  return y % ky == ky / 2 && x % kx == kx / 2;
}

}  // namespace

GridD model_run(const AppDescriptor& app, const Variant& v, WorkGroup wg, const GridD& input,
                const GridD* power, int iterations, const AppParams& params,
                const GridEvaluator& evaluate) {
  if (!app.point && !evaluate)
    throw std::logic_error("model_run: " + app.name + " needs an evaluator (a user app)");
  const int w = input.width, h = input.height, r = app.radius;
  const BlockPass pass{app, v, block_of(v, wg), w, h, hotspot_coefficients(w, h), params};
  const WorkGroup block = pass.block;
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
  const int steps = app.traits.iterated
                        ? effective_iterations(std::max(1, iterations), v.iterations_skip)
                        : std::max(1, iterations);
  for (int it = 0; it < steps; ++it) {
    GridD next(w, h);
    TileBatch batch(evaluate, tile.h, tile.w, r);
    auto read = [&current](int y, int x) { return current.at(y, x); };
    auto dest = [&next](int y, int x) { return &next.at(y, x); };
    for (int gy = 0; gy < groups_y; ++gy)
      for (int gx = 0; gx < groups_x; ++gx) {
        fill_tile(pass, gx, gy, tile, read);
        if (!app.point) {
          if (batch.full()) batch.flush();
          batch.add_tile(tile);
        }
        compute_block(pass, gx, gy, tile, power, batch, dest);
      }
    batch.flush();
    if (out_rounds) next = to_storage(std::move(next), out_type);
    // The fill pass: every other output from the computed ones, over the whole grid.
    if (v.output.ky() > 1 || v.output.kx() > 1) {
      GridD filled = next;
      auto at = [&next](int y, int x) { return next.at(y, x); };
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          if (!is_computed(v, y, x)) filled.at(y, x) = filled_output(v, w, h, y, x, at);
      next = out_rounds ? to_storage(std::move(filled), out_type) : std::move(filled);
    }
    current = std::move(next);
  }
  return current;
}

double GroupOutputs::at(int y, int x) const {
  const auto it = blocks.find(key(y / block.y, x / block.x));
  if (it == blocks.end()) return std::numeric_limits<double>::quiet_NaN();
  return it->second[static_cast<std::size_t>(y % block.y) * block.x + x % block.x];
}

namespace {

// The outputs an output scheme's fill rebuilds in the windows of the requested groups, from the
// computed outputs of their blocks and their neighbours'; stored as the variant stores them.
void fill_windows(const Variant& v, int width, int height,
                  const std::vector<std::pair<int, int>>& groups,
                  const std::vector<BlockRect>& windows, GroupOutputs& out) {
  const StorageType& out_type = *v.precision_info().out;
  std::map<std::int64_t, std::vector<double>> filled;
  auto at = [&out](int y, int x) { return out.at(y, x); };
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto [gy, gx] = groups[i];
    const BlockRect rect = windows.empty() ? BlockRect{0, out.block.y, 0, out.block.x} : windows[i];
    std::vector<double> values = out.blocks.at(out.key(gy, gx));
    for (int ly = rect.y0; ly < rect.y1; ++ly)
      for (int lx = rect.x0; lx < rect.x1; ++lx) {
        const int y = gy * out.block.y + ly, x = gx * out.block.x + lx;
        if (y >= height || x >= width || is_computed(v, y, x)) continue;
        const double value = filled_output(v, width, height, y, x, at);
        values[static_cast<std::size_t>(ly) * out.block.x + lx] =
            out_type.is_float() ? value : out_type.round(value);
      }
    filled[out.key(gy, gx)] = std::move(values);
  }
  out.blocks = std::move(filled);
}

}  // namespace

GroupOutputs model_groups(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                          const ModelInput& input, const std::vector<std::pair<int, int>>& groups,
                          const AppParams& params, const GridEvaluator& evaluate,
                          const std::vector<BlockRect>& windows) {
  const int width = input.width, height = input.height;
  if (!windows.empty() && windows.size() != groups.size())
    throw std::logic_error("model_groups: one window per group");
  if (!app.point && !evaluate)
    throw std::logic_error("model_groups: " + app.name + " needs an evaluator (a user app)");
  if (app.traits.iterated || app.traits.second_input)
    throw std::logic_error("model_groups: " + app.name + " is iterated or reads a second input");
  const BlockPass pass{
      app, v, block_of(v, wg), width, height, hotspot_coefficients(width, height), params};
  GroupOutputs out;
  out.block = pass.block;
  const int ky = v.output.ky(), kx = v.output.kx(), r = app.radius;
  const int groups_x = (width + out.block.x - 1) / out.block.x;
  const int groups_y = (height + out.block.y - 1) / out.block.y;
  // A filled output reads computed ones less than a period away: in its own block or the next
  // one along the output scheme's axes, whose groups are computed too.
  std::vector<std::pair<int, int>> computed;
  std::set<std::int64_t> seen;
  for (const auto& [gy, gx] : groups)
    for (int dy = ky > 1 ? -1 : 0; dy <= (ky > 1 ? 1 : 0); ++dy)
      for (int dx = kx > 1 ? -1 : 0; dx <= (kx > 1 ? 1 : 0); ++dx) {
        const int y = gy + dy, x = gx + dx;
        if (y >= 0 && y < groups_y && x >= 0 && x < groups_x && seen.insert(out.key(y, x)).second)
          computed.emplace_back(y, x);
      }
  const StorageType& in_type = *v.precision_info().in;
  const StorageType& out_type = *v.precision_info().out;
  const std::size_t block_size = static_cast<std::size_t>(out.block.x) * out.block.y;
  for (const auto& [gy, gx] : computed)
    out.blocks[out.key(gy, gx)].assign(block_size, std::numeric_limits<double>::quiet_NaN());
  auto stored = [&](int y, int x) {
    const double value =
        input.floats ? static_cast<double>(input.floats[static_cast<std::size_t>(y) * width + x])
                     : input.at(y, x);
    return in_type.is_float() ? value : in_type.round(value);
  };
  // Point apps split the groups over the host's threads where there is enough to compute (the
  // windows' outputs, else the blocks'); a user app's batch stays on one thread.
  long work = static_cast<long>(computed.size() * block_size);
  if (!windows.empty() && ky == 1 && kx == 1) {
    work = 0;
    for (const BlockRect& w : windows) work += static_cast<long>(w.y1 - w.y0) * (w.x1 - w.x0);
  }
  const int threads = app.point ? host_threads_for(work) : 1;
  parallel_chunks(static_cast<long>(computed.size()), threads, [&](int, long begin, long end) {
    TileD tile{out.block.y + 2 * r, out.block.x + 2 * r, {}};
    tile.v.resize(static_cast<std::size_t>(tile.h) * tile.w);
    TileBatch batch(evaluate, tile.h, tile.w, r);
    for (long i = begin; i < end; ++i) {
      const auto [gy, gx] = computed[static_cast<std::size_t>(i)];
      std::vector<double>& values = out.blocks.at(out.key(gy, gx));
      // Without a fill the computed groups are the requested ones, in order: their windows, and
      // around them the app's radius and a perforation period, from which schemes rebuild lines.
      const bool windowed = !windows.empty() && ky == 1 && kx == 1;
      BlockRect need;
      if (windowed) {
        const BlockRect& w = windows[static_cast<std::size_t>(i)];
        const int reach = std::max(v.skip, 1);
        need = {std::max(0, w.y0 - reach), std::min(tile.h, w.y1 + 2 * r + reach),
                std::max(0, w.x0 - reach), std::min(tile.w, w.x1 + 2 * r + reach)};
      }
      fill_tile(pass, gx, gy, tile, stored, windowed ? &need : nullptr);
      if (!app.point) {
        if (batch.full()) batch.flush();
        batch.add_tile(tile);
      }
      const int y0 = gy * out.block.y, x0 = gx * out.block.x;
      compute_block(
          pass, gx, gy, tile, nullptr, batch,
          [&](int y, int x) {
            return &values[static_cast<std::size_t>(y - y0) * out.block.x + (x - x0)];
          },
          windowed ? &windows[static_cast<std::size_t>(i)] : nullptr);
    }
    batch.flush();
  });
  if (!out_type.is_float())
    for (auto& [k, values] : out.blocks)
      for (double& x : values) x = out_type.round(x);
  if (ky > 1 || kx > 1) fill_windows(v, width, height, groups, windows, out);
  return out;
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
