// Perforation schemes as data: the registry the runner walks, their applicability rules, and
// the CPU model (which tile elements load, how the rest are rebuilt) the tests hold kernels to.
#pragma once

#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "apps.hpp"

namespace kperf {

enum class Recon { kNone, kNn, kLi };
const char* recon_name(Recon recon);

// A launch shape: x by y work-items, each computing `vec` consecutive outputs along x in each
// of `py` consecutive rows, so a work-group covers a block of (x * vec) by (y * py) outputs.
// The tile model works on the block.
struct WorkGroup {
  int x = 0;
  int y = 0;
  int vec = 1;
  int py = 1;
  WorkGroup block() const { return {x * vec, y * py, 1, 1}; }
  bool operator==(const WorkGroup& o) const {
    return x == o.x && y == o.y && vec == o.vec && py == o.py;
  }
  bool operator<(const WorkGroup& o) const {
    return std::tie(x, y, vec, py) < std::tie(o.x, o.y, o.vec, o.py);
  }
};

enum class Axis { kY, kX };

// The tile of one work-group's block `wg` (vec 1): (wg.y + 2r) x (wg.x + 2r) elements, element
// (ty, tx) standing for global (group_y * wg.y + ty - r, group_x * wg.x + tx - r).
struct TileGeometry {
  WorkGroup wg;
  int radius = 0;
  int skip = 1;
  int group_x = 0;
  int group_y = 0;
  int tile_w() const { return wg.x + 2 * radius; }
  int tile_h() const { return wg.y + 2 * radius; }
  int global_y(int ty) const { return group_y * wg.y + ty - radius; }
  int global_x(int tx) const { return group_x * wg.x + tx - radius; }
};

struct TileD {
  int h = 0, w = 0;
  std::vector<double> v;
  double& at(int ty, int tx) { return v[static_cast<std::size_t>(ty) * w + tx]; }
  double at(int ty, int tx) const { return v[static_cast<std::size_t>(ty) * w + tx]; }
};

// Why a configuration cannot run: status "not_applicable" or "invalid_config" and a reason.
struct Verdict {
  std::string status;
  std::string reason;
};

struct SchemeDescriptor {
  const char* family;    // canonical name: "accurate", "stencil", "rows", "cols"
  const char* cl_file;   // in the scheme directory
  const char* summary;
  bool takes_skip;       // written family:K
  bool uses_recon;       // nn and li differ
  // A reason this scheme cannot run for an app of this radius and this work-group.
  std::optional<Verdict> (*check)(int radius, WorkGroup wg, int skip);
  // Whether tile line t along `axis` is loaded; element (ty, tx) is loaded when row ty and
  // column tx both are (every scheme here is separable that way).
  bool (*loads)(Axis axis, const TileGeometry& g, int t);
  // Fills the elements that were not loaded, from loaded elements of the same tile.
  void (*reconstruct)(const TileGeometry& g, Recon recon, TileD& tile);
};

const std::vector<SchemeDescriptor>& scheme_registry();

// One runnable approximation: a scheme, its skip factor and its reconstruction.
struct Variant {
  const SchemeDescriptor* scheme = nullptr;
  int skip = 1;
  Recon recon = Recon::kNone;
  std::string canonical() const;  // "accurate", "stencil", "rows:2", "cols:3"
  std::string label() const;      // canonical plus "/nn" where the reconstruction matters
  bool is_accurate() const;
  // -D options selecting this variant in the kernel sources.
  std::string build_options() const;
};

// Parses one scheme name (accurate, stencil, rows1, rows2, rows:K, cols:K). Throws
// std::invalid_argument listing the valid forms.
Variant parse_scheme(const std::string& text);
// Comma-separated schemes or "all"; recon lists "nn,li" or "all". The cross product, with
// accurate and stencil once each (their reconstruction does not vary).
std::vector<Variant> parse_variants(const std::string& schemes, const std::string& recons);
Recon parse_recon(const std::string& text);

std::optional<Verdict> check_variant(const Variant& v, int radius, WorkGroup wg);

// The model functions below take a launch shape and work on its block (wg.block()).

// CPU model of SPEC sections 3-4: `iterations` app steps on tiles filled by the variant.
GridD model_run(const AppDescriptor& app, const Variant& v, WorkGroup wg, const GridD& input,
                const GridD* power, int iterations);

// Which input elements work-group (group_x, group_y) reads from global memory (1 = read).
std::vector<char> elements_read_by_group(const Variant& v, int radius, WorkGroup wg, int width,
                                         int height, int group_x, int group_y);
// Which input elements any work-group reads.
std::vector<char> elements_read_by_any(const Variant& v, int radius, WorkGroup wg, int width,
                                       int height);
// Distinct input elements read at least once (the scheme's share of the bytes model).
double distinct_elements_read(const Variant& v, int radius, WorkGroup wg, int width, int height);

}  // namespace kperf
