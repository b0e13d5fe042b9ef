// Perforation schemes as data, their applicability, and the CPU model of SPEC sections 3-4.
#include "schemes.hpp"

#include "cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace kperf {

const char* recon_name(Recon recon) {
  switch (recon) {
    case Recon::kNn:
      return "nn";
    case Recon::kLi:
      return "li";
    default:
      return "none";
  }
}

namespace {

// --- accurate -------------------------------------------------------------------------------
std::optional<Verdict> accurate_check(int, WorkGroup, int) { return std::nullopt; }
bool accurate_loads(Axis, const TileGeometry&, int) { return true; }
void accurate_reconstruct(const TileGeometry&, Recon, TileD&) {}

// --- stencil --------------------------------------------------------------------------------
std::optional<Verdict> stencil_check(int radius, WorkGroup, int) {
  if (radius < 1)
    return Verdict{"not_applicable", "stencil skips the halo and this app has radius 0"};
  return std::nullopt;
}
bool stencil_loads(Axis axis, const TileGeometry& g, int t) {
  const int core = axis == Axis::kY ? g.wg.y : g.wg.x;
  return t >= g.radius && t < g.radius + core;
}
void stencil_reconstruct(const TileGeometry& g, Recon, TileD& tile) {
  for (int ty = 0; ty < tile.h; ++ty)
    for (int tx = 0; tx < tile.w; ++tx)
      if (!stencil_loads(Axis::kY, g, ty) || !stencil_loads(Axis::kX, g, tx))
        tile.at(ty, tx) = tile.at(std::clamp(ty, g.radius, g.radius + g.wg.y - 1),
                                  std::clamp(tx, g.radius, g.radius + g.wg.x - 1));
}

// --- rows:k and cols:k ----------------------------------------------------------------------
// Line t of the tile along the perforated axis is kept when its unclamped global coordinate
// plus the radius is a multiple of k.
bool line_kept(Axis axis, const TileGeometry& g, int t) {
  const int global = axis == Axis::kY ? g.global_y(t) : g.global_x(t);
  const int m = (global + g.radius) % g.skip;
  return (m + g.skip) % g.skip == 0;
}

std::optional<Verdict> lines_check(Axis axis, int radius, WorkGroup wg, int skip) {
  const int extent = (axis == Axis::kY ? wg.y : wg.x) + 2 * radius;
  if (extent < skip)
    return Verdict{"invalid_config",
                   std::string("tile ") + (axis == Axis::kY ? "height" : "width") + " " +
                       std::to_string(extent) + " (work-group " + std::to_string(axis == Axis::kY ? wg.y : wg.x) +
                       " + 2*radius " + std::to_string(radius) + ") is smaller than k = " +
                       std::to_string(skip)};
  return std::nullopt;
}

// Rebuilds every element of a missing line from the nearest kept lines of the same tile.
void lines_reconstruct(Axis axis, const TileGeometry& g, Recon recon, TileD& tile) {
  const int n_lines = axis == Axis::kY ? tile.h : tile.w;
  const int len = axis == Axis::kY ? tile.w : tile.h;
  auto elem = [&](int line, int pos) -> double& {
    return axis == Axis::kY ? tile.at(line, pos) : tile.at(pos, line);
  };
  for (int line = 0; line < n_lines; ++line) {
    if (line_kept(axis, g, line)) continue;
    int above = line - 1, below = line + 1;
    while (above >= 0 && !line_kept(axis, g, above)) --above;
    while (below < n_lines && !line_kept(axis, g, below)) ++below;
    const bool has_above = above >= 0, has_below = below < n_lines;
    for (int pos = 0; pos < len; ++pos) {
      double value;
      if (has_above && has_below) {
        const double da = line - above, db = below - line;
        if (recon == Recon::kLi)
          value = (elem(above, pos) * db + elem(below, pos) * da) / (da + db);
        else
          value = da <= db ? elem(above, pos) : elem(below, pos);  // ties take the line before
      } else {
        value = has_above ? elem(above, pos) : elem(below, pos);
      }
      elem(line, pos) = value;
    }
  }
}

std::optional<Verdict> rows_check(int r, WorkGroup wg, int k) { return lines_check(Axis::kY, r, wg, k); }
bool rows_loads(Axis axis, const TileGeometry& g, int t) {
  return axis == Axis::kX || line_kept(Axis::kY, g, t);
}
void rows_reconstruct(const TileGeometry& g, Recon recon, TileD& tile) {
  lines_reconstruct(Axis::kY, g, recon, tile);
}

std::optional<Verdict> cols_check(int r, WorkGroup wg, int k) { return lines_check(Axis::kX, r, wg, k); }
bool cols_loads(Axis axis, const TileGeometry& g, int t) {
  return axis == Axis::kY || line_kept(Axis::kX, g, t);
}
void cols_reconstruct(const TileGeometry& g, Recon recon, TileD& tile) {
  lines_reconstruct(Axis::kX, g, recon, tile);
}

}  // namespace

const std::vector<SchemeDescriptor>& scheme_registry() {
  static const std::vector<SchemeDescriptor> schemes = {
      {"accurate", "scheme_accurate.cl", "every tile element loaded", false, false,
       accurate_check, accurate_loads, accurate_reconstruct},
      {"stencil", "scheme_stencil.cl", "core loaded, halo from the nearest core element", false,
       false, stencil_check, stencil_loads, stencil_reconstruct},
      {"rows", "scheme_rows.cl", "one tile row in k loaded", true, true, rows_check, rows_loads,
       rows_reconstruct},
      {"cols", "scheme_cols.cl", "one tile column in k loaded", true, true, cols_check,
       cols_loads, cols_reconstruct},
  };
  return schemes;
}

std::string Variant::canonical() const {
  return scheme->takes_skip ? std::string(scheme->family) + ":" + std::to_string(skip)
                            : std::string(scheme->family);
}

std::string Variant::label() const {
  return scheme->uses_recon ? canonical() + "/" + recon_name(recon) : canonical();
}

bool Variant::is_accurate() const { return std::string(scheme->family) == "accurate"; }

std::string Variant::build_options() const {
  return std::string("-DKPERF_SCHEME_FILE=") + scheme->cl_file + " -DSKIP=" +
         std::to_string(skip) + " -DRECON_LI=" + (recon == Recon::kLi ? "1" : "0");
}

namespace {

const char* kSchemeForms =
    "valid: accurate, stencil, rows1 (= rows:2), rows2 (= rows:3), rows:K, cols:K with an "
    "integer K >= 2, all";

const SchemeDescriptor& find_family(const std::string& family) {
  for (const auto& s : scheme_registry())
    if (family == s.family) return s;
  throw std::invalid_argument("unknown scheme '" + family + "' (" + kSchemeForms + ")");
}

}  // namespace

Variant parse_scheme(const std::string& text) {
  Variant v;
  if (text == "rows1" || text == "rows2") {
    v.scheme = &find_family("rows");
    v.skip = text == "rows1" ? 2 : 3;
    return v;
  }
  const auto colon = text.find(':');
  const std::string family = text.substr(0, colon);
  const SchemeDescriptor* desc = nullptr;
  for (const auto& s : scheme_registry())
    if (family == s.family) desc = &s;
  if (!desc) throw std::invalid_argument("unknown scheme '" + text + "' (" + kSchemeForms + ")");
  v.scheme = desc;
  if (desc->takes_skip) {
    if (colon == std::string::npos)
      throw std::invalid_argument("scheme '" + text + "' needs a skip factor (" + kSchemeForms + ")");
    const std::string k = text.substr(colon + 1);
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(k.c_str(), &end, 10);
    if (k.empty() || *end != '\0' || errno != 0 || value < 2 || value > 4096 ||
        !std::isdigit(static_cast<unsigned char>(k[0])))
      throw std::invalid_argument("invalid skip factor in scheme '" + text + "' (" +
                                  kSchemeForms + ")");
    v.skip = static_cast<int>(value);
  } else if (colon != std::string::npos) {
    throw std::invalid_argument("scheme '" + text + "' takes no skip factor (" + kSchemeForms + ")");
  }
  return v;
}

Recon parse_recon(const std::string& text) {
  if (text == "nn") return Recon::kNn;
  if (text == "li") return Recon::kLi;
  throw std::invalid_argument("unknown reconstruction '" + text + "' (valid: nn, li, all)");
}

std::vector<Variant> parse_variants(const std::string& schemes, const std::string& recons) {
  std::vector<Recon> recon_list;
  for (const auto& r : split_list(recons)) {
    if (r == "all") {
      recon_list = {Recon::kNn, Recon::kLi};
      break;
    }
    const Recon parsed = parse_recon(r);
    if (std::find(recon_list.begin(), recon_list.end(), parsed) == recon_list.end())
      recon_list.push_back(parsed);
  }
  std::vector<std::string> names = split_list(schemes);
  if (names.size() == 1 && names[0] == "all")
    names = {"accurate", "stencil", "rows:2", "rows:3", "rows:4", "cols:2", "cols:3"};
  std::vector<Variant> out;
  auto add = [&](Variant v) {
    for (const auto& o : out)
      if (o.scheme == v.scheme && o.skip == v.skip && o.recon == v.recon) return;
    out.push_back(v);
  };
  for (const auto& name : names) {
    Variant v = parse_scheme(name);
    if (!v.scheme->uses_recon) {
      v.recon = v.is_accurate() ? Recon::kNone : Recon::kNn;
      add(v);
      continue;
    }
    for (Recon r : recon_list) {
      v.recon = r;
      add(v);
    }
  }
  return out;
}

std::optional<Verdict> check_variant(const Variant& v, int radius, WorkGroup wg) {
  return v.scheme->check(radius, wg.block(), v.skip);
}

GridD model_run(const AppDescriptor& app, const Variant& v, WorkGroup wg, const GridD& input,
                const GridD* power, int iterations) {
  wg = wg.block();
  const int w = input.width, h = input.height, r = app.radius;
  const HotspotCoefficients coef = hotspot_coefficients(w, h);
  const int groups_x = (w + wg.x - 1) / wg.x, groups_y = (h + wg.y - 1) / wg.y;
  GridD current = input;
  TileD tile{wg.y + 2 * r, wg.x + 2 * r, {}};
  tile.v.resize(static_cast<std::size_t>(tile.h) * tile.w);
  for (int it = 0; it < std::max(1, iterations); ++it) {
    GridD next(w, h);
    for (int gy = 0; gy < groups_y; ++gy)
      for (int gx = 0; gx < groups_x; ++gx) {
        const TileGeometry g{wg, r, v.skip, gx, gy};
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
        for (int ly = 0; ly < wg.y; ++ly)
          for (int lx = 0; lx < wg.x; ++lx) {
            const int y = gy * wg.y + ly, x = gx * wg.x + lx;
            if (y >= h || x >= w) continue;
            PointArgs args;
            args.hotspot = &coef;
            if (power) args.power = power->at(y, x);
            next.at(y, x) = app.point(Window{&tile.at(ly + r, lx + r), tile.w}, args);
          }
      }
    current = std::move(next);
  }
  return current;
}

namespace {

// Marks, per axis, the global lines (clamped) that group `group` reads.
void mark_lines(const Variant& v, Axis axis, const TileGeometry& g, int extent, int size,
                std::vector<char>& mark) {
  for (int t = 0; t < extent; ++t)
    if (v.scheme->loads(axis, g, t)) {
      const int global = axis == Axis::kY ? g.global_y(t) : g.global_x(t);
      mark[static_cast<std::size_t>(std::clamp(global, 0, size - 1))] = 1;
    }
}

}  // namespace

std::vector<char> elements_read_by_group(const Variant& v, int radius, WorkGroup wg, int width,
                                         int height, int group_x, int group_y) {
  const TileGeometry g{wg.block(), radius, v.skip, group_x, group_y};
  std::vector<char> rows(static_cast<std::size_t>(height), 0), cols(static_cast<std::size_t>(width), 0);
  mark_lines(v, Axis::kY, g, g.tile_h(), height, rows);
  mark_lines(v, Axis::kX, g, g.tile_w(), width, cols);
  std::vector<char> mask(static_cast<std::size_t>(width) * height, 0);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) mask[static_cast<std::size_t>(y) * width + x] = rows[y] && cols[x];
  return mask;
}

namespace {

// Lines read by any group along one axis (separable schemes: rows depend on group_y only).
std::vector<char> lines_read_by_any(const Variant& v, Axis axis, int radius, WorkGroup wg,
                                    int size) {
  wg = wg.block();
  std::vector<char> mark(static_cast<std::size_t>(size), 0);
  const int per_group = axis == Axis::kY ? wg.y : wg.x;
  const int groups = (size + per_group - 1) / per_group;
  for (int grp = 0; grp < groups; ++grp) {
    TileGeometry g{wg, radius, v.skip, axis == Axis::kX ? grp : 0, axis == Axis::kY ? grp : 0};
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
    for (int x = 0; x < width; ++x) mask[static_cast<std::size_t>(y) * width + x] = rows[y] && cols[x];
  return mask;
}

double distinct_elements_read(const Variant& v, int radius, WorkGroup wg, int width, int height) {
  const auto rows = lines_read_by_any(v, Axis::kY, radius, wg, height);
  const auto cols = lines_read_by_any(v, Axis::kX, radius, wg, width);
  return static_cast<double>(std::count(rows.begin(), rows.end(), 1)) *
         static_cast<double>(std::count(cols.begin(), cols.end(), 1));
}

}  // namespace kperf
