// The approximation axes as data (the registries) and their applicability; the CPU models of what
// a scheme computes and reads are in scheme_models.cpp.
#include "schemes.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include "kernel_axes.hpp"
#include "storage.hpp"
#include "strings.hpp"
#include "structural_axes.hpp"

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
    return Verdict{Status::kNotApplicable, "stencil skips the halo and this app has radius 0"};
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
    return Verdict{Status::kInvalidConfig,
                   std::string("tile ") + (axis == Axis::kY ? "height" : "width") + " " +
                       std::to_string(extent) + " (work-group " +
                       std::to_string(axis == Axis::kY ? wg.y : wg.x) + " + 2*radius " +
                       std::to_string(radius) + ") is smaller than k = " + std::to_string(skip)};
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

std::optional<Verdict> rows_check(int r, WorkGroup wg, int k) {
  return lines_check(Axis::kY, r, wg, k);
}
bool rows_loads(Axis axis, const TileGeometry& g, int t) {
  return axis == Axis::kX || line_kept(Axis::kY, g, t);
}
void rows_reconstruct(const TileGeometry& g, Recon recon, TileD& tile) {
  lines_reconstruct(Axis::kY, g, recon, tile);
}

std::optional<Verdict> cols_check(int r, WorkGroup wg, int k) {
  return lines_check(Axis::kX, r, wg, k);
}
bool cols_loads(Axis axis, const TileGeometry& g, int t) {
  return axis == Axis::kY || line_kept(Axis::kX, g, t);
}
void cols_reconstruct(const TileGeometry& g, Recon recon, TileD& tile) {
  lines_reconstruct(Axis::kX, g, recon, tile);
}

}  // namespace

const std::vector<SchemeDescriptor>& scheme_registry() {
  static const std::vector<SchemeDescriptor> schemes = {
      {"accurate", "scheme_accurate.cl", "every tile element loaded", false, false, true,
       accurate_check, accurate_loads, accurate_reconstruct},
      {"stencil", "scheme_stencil.cl", "core loaded, halo from the nearest core element", false,
       false, false, stencil_check, stencil_loads, stencil_reconstruct},
      {"rows", "scheme_rows.cl", "one tile row in k loaded", true, true, false, rows_check,
       rows_loads, rows_reconstruct},
      {"cols", "scheme_cols.cl", "one tile column in k loaded", true, true, false, cols_check,
       cols_loads, cols_reconstruct},
  };
  return schemes;
}

const std::vector<LoadDescriptor>& load_registry() {
  static const std::vector<LoadDescriptor> loads = {
      {"local", "load_local.cl", true, false, "tile in local memory filled from a buffer"},
      {"global", "load_global.cl", false, false,
       "no local memory: every tap read from the global buffer (Paraprox's baseline)"},
      {"image", "load_image.cl", true, true, "tile filled with read_imagef from an image2d_t"},
  };
  return loads;
}

const LoadDescriptor& find_load(const std::string& name) {
  for (const auto& l : load_registry())
    if (name == l.name) return l;
  throw std::invalid_argument("unknown load path '" + name + "' (valid: local, global, image)");
}

const std::vector<OutputDescriptor>& output_registry() {
  static const std::vector<OutputDescriptor> outputs = {
      {"none", "output_none.cl", false, false, "every output computed"},
      {"rows", "output_grid.cl", true, false, "one output row in k computed"},
      {"cols", "output_grid.cl", false, true, "one output column in k computed"},
      {"center", "output_grid.cl", true, true, "one output per k x k block computed, its centre"},
  };
  return outputs;
}

std::string OutputScheme::canonical() const {
  return none() ? std::string("none") : std::string(desc->family) + ":" + std::to_string(k);
}

namespace {

const char* kOutputForms = "valid: none, rows:K, cols:K, center:K with an integer K >= 2";

// Strict decimal integer K in [2, 4096] after "family:".
int parse_factor(const std::string& text, const std::string& k, const char* forms) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(k.c_str(), &end, 10);
  if (k.empty() || !std::isdigit(static_cast<unsigned char>(k[0])) || *end != '\0' || errno != 0 ||
      value < 2 || value > 4096)
    throw std::invalid_argument("invalid factor K in '" + text + "' (" + forms + ")");
  return static_cast<int>(value);
}

}  // namespace

OutputScheme parse_output(const std::string& text) {
  const auto colon = text.find(':');
  const std::string family = text.substr(0, colon);
  for (const auto& d : output_registry()) {
    if (family != d.family) continue;
    OutputScheme o;
    o.desc = &d;
    if (!d.along_x && !d.along_y) {
      if (colon != std::string::npos)
        throw std::invalid_argument("output scheme '" + text + "' takes no factor (" +
                                    kOutputForms + ")");
      return o;
    }
    if (colon == std::string::npos)
      throw std::invalid_argument("output scheme '" + text + "' needs a factor K (" + kOutputForms +
                                  ")");
    o.k = parse_factor(text, text.substr(colon + 1), kOutputForms);
    return o;
  }
  throw std::invalid_argument("unknown output scheme '" + text + "' (" + kOutputForms + ")");
}

const std::vector<OutputFillDescriptor>& output_fill_registry() {
  static const std::vector<OutputFillDescriptor> fills = {
      {"fused", "output_fill_fused.cl", 1, false,
       "one launch: the work-item that computes an output writes its copies / interpolations"},
      {"shared", "output_fill_shared.cl", 1, true,
       "one launch: a work-group computes each computed output once and shares them in local "
       "memory"},
      {"separate", "output_fill_separate.cl", 2, false,
       "a second, timed launch rebuilds the outputs from the stored computed ones"},
  };
  return fills;
}

const OutputFillDescriptor& find_output_fill(const std::string& name) {
  for (const auto& f : output_fill_registry())
    if (name == f.name) return f;
  throw std::invalid_argument("unknown --output-fill '" + name +
                              "' (valid: fused, shared, separate)");
}

const OutputFillDescriptor& Variant::fill() const {
  return output_fill ? *output_fill : output_fill_registry().front();
}

int effective_iterations(int iterations, double skip) {
  return std::max(1, static_cast<int>(std::ceil(iterations * (1.0 - skip) - 1e-9)));
}

const LoadDescriptor& Variant::load_path() const { return load ? *load : load_registry().front(); }

const std::vector<PrecisionDescriptor>& precision_registry() {
  static const std::vector<PrecisionDescriptor> registry = {
      {"f32", "precision_f32.cl", &storage_type("f32"), &storage_type("f32"),
       "input and output stored as float"},
      {"f16in", "precision_f16in.cl", &storage_type("f16"), &storage_type("f32"),
       "input stored as half (vload_half), output float"},
      {"f16", "precision_f16.cl", &storage_type("f16"), &storage_type("f16"),
       "input and output stored as half (vload/vstore_half)"},
      {"bf16", "precision_bf16.cl", &storage_type("bf16"), &storage_type("bf16"),
       "input and output stored as bfloat16 (integer conversions)"},
  };
  return registry;
}

const PrecisionDescriptor& find_precision(const std::string& name) {
  for (const auto& p : precision_registry())
    if (name == p.name) return p;
  std::string valid;
  for (const auto& p : precision_registry())
    valid += (valid.empty() ? "" : ", ") + std::string(p.name);
  throw std::invalid_argument("unknown --precision '" + name + "' (valid: " + valid + ")");
}

const PrecisionDescriptor& Variant::precision_info() const {
  return precision ? *precision : precision_registry().front();
}

std::string Variant::axes_key() const {
  std::string key;
  for (const StructuralAxis& axis : structural_axes()) {
    const std::string segment = axis.key_segment(*this);
    if (!segment.empty()) key += "/" + segment;
  }
  key += kernel_axes_key(*this);
  return key.empty() ? key : key.substr(1);
}

std::string Variant::canonical() const {
  return scheme->takes_skip ? std::string(scheme->family) + ":" + std::to_string(skip)
                            : std::string(scheme->family);
}

std::string Variant::id() const {
  const std::string axes = axes_key();
  return canonical() + "/" + recon_name(recon) + (axes.empty() ? "" : "/" + axes);
}

std::string Variant::family() const {
  std::vector<std::string> kinds;
  if (!is_accurate()) kinds.push_back(host_perforate ? "host perforation" : "input perforation");
  for (const StructuralAxis& axis : structural_axes()) {
    std::string family = axis.family(*this);
    if (!family.empty()) kinds.push_back(std::move(family));
  }
  for (const auto& family : kernel_axes_families(*this)) kinds.push_back(family);
  if (kinds.empty()) return "accurate";
  return kinds.size() == 1 ? kinds[0] : "combination";
}

std::string Variant::label() const {
  return scheme->uses_recon ? canonical() + "/" + recon_name(recon) : canonical();
}

bool Variant::is_accurate() const { return std::string(scheme->family) == "accurate"; }

std::string Variant::build_options() const {
  std::string options = std::string("-DKPERF_SCHEME_FILE=") + scheme->cl_file +
                        " -DSKIP=" + std::to_string(skip) +
                        " -DRECON_LI=" + (recon == Recon::kLi ? "1" : "0");
  if (scheme->frame_free) options += " -DKPERF_FRAME_FREE=1";
  // Default axes add nothing, so version-1 configurations build exactly as before.
  for (const StructuralAxis& axis : structural_axes()) {
    const std::string axis_options = axis.build_options(*this);
    if (!axis_options.empty()) options += " " + axis_options;
  }
  return options + kernel_axes_build_options(*this);
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
      throw std::invalid_argument("scheme '" + text + "' needs a skip factor (" + kSchemeForms +
                                  ")");
    const std::string k = text.substr(colon + 1);
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(k.c_str(), &end, 10);
    if (k.empty() || *end != '\0' || errno != 0 || value < 2 || value > 4096 ||
        !std::isdigit(static_cast<unsigned char>(k[0])))
      throw std::invalid_argument("invalid skip factor in scheme '" + text + "' (" + kSchemeForms +
                                  ")");
    v.skip = static_cast<int>(value);
  } else if (colon != std::string::npos) {
    throw std::invalid_argument("scheme '" + text + "' takes no skip factor (" + kSchemeForms +
                                ")");
  }
  return v;
}

Recon parse_recon(const std::string& text) {
  if (text == "nn") return Recon::kNn;
  if (text == "li") return Recon::kLi;
  throw std::invalid_argument("unknown reconstruction '" + text + "' (valid: nn, li, all)");
}

std::vector<Recon> parse_recon_list(const std::string& text) {
  std::vector<Recon> out;
  for (const auto& r : split_list(text)) {
    if (r == "all") return {Recon::kNn, Recon::kLi};
    const Recon parsed = parse_recon(r);
    if (std::find(out.begin(), out.end(), parsed) == out.end()) out.push_back(parsed);
  }
  return out;
}

std::vector<double> parse_iterations_skip_list(const std::string& text) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) {
    char* end = nullptr;
    errno = 0;
    const double r = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || errno != 0 || !(r >= 0.0 && r < 1.0))
      throw std::invalid_argument("invalid --iterations-skip '" + item +
                                  "' (expected fractions R with 0 <= R < 1, e.g. 0,0.25,0.5)");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

std::vector<Variant> parse_variants(const AxesSpec& axes) {
  const std::vector<Recon> recon_list = parse_recon_list(axes.recons);
  std::vector<std::string> names = split_list(axes.schemes);
  if (names.size() == 1 && names[0] == "all")
    names = {"accurate", "stencil", "rows:2", "rows:3", "rows:4", "cols:2", "cols:3"};
  std::vector<Variant> all;
  for (const auto& name : names) {
    Variant v = parse_scheme(name);
    std::vector<Recon> rs = {v.is_accurate() ? Recon::kNone : Recon::kNn};
    if (v.scheme->uses_recon) rs = recon_list;
    for (Recon r : rs) {
      v.recon = r;
      all.push_back(v);
    }
  }
  // Crossed with every structural axis's values in registry order (the first varies slowest),
  // then with every combination of the kernel axes' values.
  for (const StructuralAxis& axis : structural_axes()) {
    const auto choices = axis.choices(axes);
    std::vector<Variant> next;
    for (const Variant& v : all)
      for (const auto& choose : choices) {
        next.push_back(v);
        choose(next.back());
      }
    all = std::move(next);
  }
  for (const auto& values : parse_kernel_axis_lists(axes.kernel)) {
    std::vector<Variant> next;
    for (const Variant& v : all)
      for (int value : values) {
        next.push_back(v);
        next.back().kernel_values.push_back(value);
      }
    all = std::move(next);
  }
  // Each identity once, in the order first met (a set: the cross product of every axis runs to
  // tens of thousands of variants).
  std::vector<Variant> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Variant& v : all)
    if (seen.emplace(v.label(), v.axes_key()).second) out.push_back(v);
  return out;
}

std::vector<Variant> parse_variants(const std::string& schemes, const std::string& recons) {
  AxesSpec axes;
  axes.schemes = schemes;
  axes.recons = recons;
  return parse_variants(axes);
}

std::optional<Verdict> check_variant(const Variant& v, const AppDescriptor& app, WorkGroup wg) {
  for (const StructuralAxis& axis : structural_axes())
    if (auto verdict = axis.verdict(v, app)) return verdict;
  if (auto verdict = check_kernel_axes(v, app)) return verdict;
  return check_variant(v, app.radius, wg);
}

std::string kernel_build_options(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                 const std::string& kernel_root, const AppParams& params,
                                 const std::string& extra_options, bool fp64_truth) {
  return (app.param_options ? app.param_options(params, fp64_truth) + " " : std::string()) +
         "-cl-std=CL1.2 -I " + (std::filesystem::path(kernel_root) / "schemes").string() + " " +
         v.build_options() + " -DWG_X=" + std::to_string(wg.x) + " -DWG_Y=" + std::to_string(wg.y) +
         shape_build_options(v, wg) + (fp64_truth ? " -DKPERF_FP64_TRUTH=1" : "") +
         (extra_options.empty() ? "" : " " + extra_options);
}

std::string shape_build_options(const Variant& v, WorkGroup wg) {
  const bool along_y = v.output.ky() > 1, along_x = v.output.kx() > 1;
  std::string options = " -DVEC=" + std::to_string(along_x ? 1 : wg.vec) +
                        " -DPY=" + std::to_string(along_y ? 1 : wg.py);
  if (blocks_overlap_y(v, wg)) options += " -DKPERF_OVERLAP_Y=1";
  if (blocks_overlap_x(v, wg)) options += " -DKPERF_OVERLAP_X=1";
  if (along_y) options += " -DOUT_PY=" + std::to_string(wg.py);
  if (along_x) options += " -DOUT_VEC=" + std::to_string(wg.vec);
  return options;
}

bool uses_local_tile(const AppDescriptor& app, const Variant& v) {
  // An accurate kernel of an app that reads its window straight from global memory has no tile.
  const bool direct =
      v.is_accurate() && !app.accurate_uses_tile && !v.load_path().reads_image && v.output.none();
  return v.load_path().uses_tile && !direct;
}

std::optional<std::string> output_misfit(const OutputScheme& output, int width, int height) {
  if (output.ky() <= height && output.kx() <= width) return std::nullopt;
  return output.canonical() + " is larger than the " + std::to_string(width) + "x" +
         std::to_string(height) + " grid";
}

std::optional<Verdict> check_variant(const Variant& v, int radius, WorkGroup wg) {
  return v.scheme->check(radius, block_of(v, wg), v.skip);
}

}  // namespace kperf
