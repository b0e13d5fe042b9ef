// The approximation axes as data (input schemes, load paths, output schemes, barrier relaxation,
// launch perforation): the registries the runner walks, their applicability rules, and the CPU
// model (which tile elements load, how the rest are rebuilt, which outputs are computed) the
// tests hold kernels to.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "apps.hpp"
#include "status.hpp"
#include "storage_types.hpp"

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
  int step_y = 0;   // output rows between groups' blocks along y; 0: wg.y (no overlap)
  int step_x = 0;   // likewise along x
  int shift_x = 0;  // the first block starts shift_x columns left of the grid
  int global_y(int ty) const { return group_y * (step_y ? step_y : wg.y) + ty - radius; }
  int global_x(int tx) const { return group_x * (step_x ? step_x : wg.x) - shift_x + tx - radius; }
};

struct TileD {
  int h = 0, w = 0;
  std::vector<double> v;
  double& at(int ty, int tx) { return v[static_cast<std::size_t>(ty) * w + tx]; }
  double at(int ty, int tx) const { return v[static_cast<std::size_t>(ty) * w + tx]; }
};

struct SchemeDescriptor {
  const char* family;   // canonical name: "accurate", "stencil", "rows", "cols"
  const char* cl_file;  // in the scheme directory
  const char* summary;
  bool takes_skip;  // written family:K
  bool uses_recon;  // nn and li differ
  // The tile holds every element's own value whatever the group (-DKPERF_FRAME_FREE=1), so a
  // group may compute a neighbouring block's outputs from its own, larger tile.
  bool frame_free;
  // A reason this scheme cannot run for an app of this radius and this work-group.
  std::optional<Verdict> (*check)(int radius, WorkGroup wg, int skip);
  // Whether tile line t along `axis` is loaded; element (ty, tx) is loaded when row ty and
  // column tx both are (every scheme here is separable that way).
  bool (*loads)(Axis axis, const TileGeometry& g, int t);
  // Fills the elements that were not loaded, from loaded elements of the same tile.
  void (*reconstruct)(const TileGeometry& g, Recon recon, TileD& tile);
};

const std::vector<SchemeDescriptor>& scheme_registry();

// How windows reach the work-items (SPEC 10): through a local tile filled from a buffer, straight
// from the global buffer, or through a tile filled from an image object.
struct LoadDescriptor {
  const char* name;     // "local", "global", "image"
  const char* cl_file;  // in the scheme directory
  bool uses_tile;       // a local tile (and so a barrier between fill and compute)
  bool reads_image;     // the input is an image2d_t (CL_R, CL_FLOAT)
  const char* summary;
};
const std::vector<LoadDescriptor>& load_registry();
const LoadDescriptor& find_load(const std::string& name);  // throws std::invalid_argument

// Output approximation (SPEC 10): one output line in k computed along y and/or x.
struct OutputDescriptor {
  const char* family;  // "none", "rows", "cols", "center"
  const char* cl_file;
  bool along_y, along_x;
  const char* summary;
};
const std::vector<OutputDescriptor>& output_registry();

struct OutputScheme {
  const OutputDescriptor* desc = nullptr;  // nullptr: none
  int k = 1;
  bool none() const { return !desc || (!desc->along_y && !desc->along_x); }
  int ky() const { return !none() && desc->along_y ? k : 1; }
  int kx() const { return !none() && desc->along_x ? k : 1; }
  std::string canonical() const;  // "none", "rows:2", "center:3"
};
// "none", "rows:K", "cols:K", "center:K" with K >= 2. Throws std::invalid_argument.
OutputScheme parse_output(const std::string& text);

// How the outputs an output scheme does not compute are written (SPEC 13 `output_fill`): by the
// work-items that compute their sources, in the same launch ("fused", Paraprox's way and the
// default), or by a second, timed launch over the stored computed outputs ("separate").
struct OutputFillDescriptor {
  const char* name;      // "fused", "shared", "separate"
  const char* cl_file;   // in the scheme directory (-DKPERF_OUTPUT_FILL_FILE)
  int launches;          // kernel launches per app step
  bool overlaps_blocks;  // neighbouring blocks share lines where they can (blocks_overlap_y/x)
  const char* summary;
};
const std::vector<OutputFillDescriptor>& output_fill_registry();
const OutputFillDescriptor& find_output_fill(
    const std::string& name);  // throws std::invalid_argument

// Storage precision (SPEC 10): how input and output are stored in global memory; compute is
// float throughout.
struct PrecisionDescriptor {
  const char* name;        // "f32", "f16in", "f16", "bf16"
  const char* cl_file;     // in the scheme directory
  const StorageType* in;   // the input's (and hotspot's power's) storage
  const StorageType* out;  // the output's
  const char* summary;
  bool exact() const { return in->is_float() && out->is_float(); }
};
const std::vector<PrecisionDescriptor>& precision_registry();
const PrecisionDescriptor& find_precision(const std::string& name);  // throws std::invalid_argument

// One runnable approximation: an input scheme with its skip factor and reconstruction, a load
// path, an output scheme with its reconstruction, a storage precision, where perforation happens,
// (hotspot) launch perforation and the kernel axes.
struct Variant {
  const SchemeDescriptor* scheme = nullptr;
  int skip = 1;
  Recon recon = Recon::kNone;
  const LoadDescriptor* load = nullptr;  // nullptr: local
  OutputScheme output;
  Recon output_recon = Recon::kNone;                  // nn or li under an output scheme
  const OutputFillDescriptor* output_fill = nullptr;  // under an output scheme; nullptr: fused
  const PrecisionDescriptor* precision = nullptr;     // nullptr: f32
  bool host_perforate = false;  // the host packs the kept lines (rows:K / cols:K) before upload
  double iterations_skip = 0;   // hotspot: fraction of the launches skipped
  // The value (an index into its descriptor's values) of each kernel axis (kernel_axes.hpp:
  // barrier relaxation, loop perforation, bilateral's weights...), by registry position.
  std::vector<int> kernel_values;
  int kernel_value(std::size_t axis) const {
    return axis < kernel_values.size() ? kernel_values[axis] : 0;  // 0: the axis's default
  }
  std::string canonical() const;  // "accurate", "stencil", "rows:2", "cols:3"
  // The variant's identity: canonical/recon[/axes] ("rows:2/nn/out:rows:2/li/fused/f16"), the one
  // string rows, the tuner, reports and resume know it by.
  std::string id() const;
  // Its approximation family: "accurate", one of "input perforation", "host perforation",
  // "output approximation", "mixed precision", "launch perforation" or a kernel axis's family,
  // or "combination".
  std::string family() const;
  std::string label() const;  // canonical plus "/nn" where the reconstruction matters
  bool is_accurate() const;   // the input scheme loads everything
  const LoadDescriptor& load_path() const;
  const PrecisionDescriptor& precision_info() const;
  const OutputFillDescriptor& fill() const;  // meaningful under an output scheme
  // The non-default axes as result-key segments ("load:global/out:rows:2/nn/f16in/host");
  // empty for a version-1 configuration.
  std::string axes_key() const;
  // -D options selecting this variant in the kernel sources.
  std::string build_options() const;
};

// Timed launches of an iterated app with `iterations` steps under launch perforation `skip`:
// ceil(iterations * (1 - skip)), at least 1.
int effective_iterations(int iterations, double skip);

// Parses one scheme name (accurate, stencil, rows1, rows2, rows:K, cols:K). Throws
// std::invalid_argument listing the valid forms.
Variant parse_scheme(const std::string& text);

// The lists of every axis as given on the command line (each comma-separated).
struct AxesSpec {
  std::string schemes = "accurate,stencil,rows1,rows2";
  std::string recons = "nn";
  std::string loads = "local";
  std::string outputs = "none";
  std::string output_recons = "nn";
  std::string output_fills = "fused";
  std::string precisions = "f32";
  std::string perforates = "device";
  std::string iterations_skips = "0";
  // The kernel axes (kernel_axes.hpp) by flag; an absent one: its default alone.
  std::map<std::string, std::string> kernel;
};
// The cross product of every axis, with accurate and stencil once each (their reconstruction
// does not vary) and output reconstruction and fill only under an output scheme. Throws
// std::invalid_argument naming a bad value and the valid choices.
std::vector<Variant> parse_variants(const AxesSpec& axes);
std::vector<Variant> parse_variants(const std::string& schemes, const std::string& recons);
Recon parse_recon(const std::string& text);
// A comma-separated list of reconstructions ("nn,li", "all"), each once.
std::vector<Recon> parse_recon_list(const std::string& text);
std::vector<double> parse_iterations_skip_list(const std::string& text);

// The block of outputs a work-group accounts for: its work-items times their outputs, times
// the output scheme's period along each axis (along which a work-item computes vec or py
// outputs one period apart).
WorkGroup block_of(const Variant& v, WorkGroup wg);
// Under a fill whose blocks overlap (the shared fill, li along y, a tile that does not depend on
// the group, two computed rows or more a block), neighbouring groups' blocks share one computed
// row: the output rows from one group's block to the next one's are block.y - ky, and the
// launch covers the grid's computed rows with that step (-DKPERF_OVERLAP_Y, kperf_tile.cl).
bool blocks_overlap_y(const Variant& v, WorkGroup wg);
int group_step_y(const Variant& v, WorkGroup wg);
int groups_along_y(const Variant& v, WorkGroup wg, int height);
// Along x (the same fill and tile, an output scheme along x whose fill reads the neighbours'
// computed columns) by whole work-items: a group's first work-item computes the previous
// block's last work-item's columns, its last one (li, K > 2) the next block's first, and neither
// stores (-DKPERF_OVERLAP_X). side_items_x: those work-items, 0 without overlap.
bool blocks_overlap_x(const Variant& v, WorkGroup wg);
int side_items_x(const Variant& v, WorkGroup wg);
int groups_along_x(const Variant& v, WorkGroup wg, int width);
// The first output column of group gx's block (negative for the first under overlap).
int block_x0(const Variant& v, WorkGroup wg, int gx);

// The launch shape's -D options: VEC and PY outputs per work-item along x and y; along an
// output scheme's axis the app computes one (VEC or PY 1) and OUT_VEC or OUT_PY counts the
// computed outputs one period apart.
// Every build option of an app kernel: the app's parameters, the tile contract's include path,
// the variant's -D options, the launch shape and --cl-options; `fp64_truth` builds the app's
// accurate kernel with every float in double (app_truth.hpp).
std::string kernel_build_options(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                 const std::string& kernel_root, const AppParams& params,
                                 const std::string& extra_options, bool fp64_truth = false);
std::string shape_build_options(const Variant& v, WorkGroup wg);

// Whether the kernel of `app` under `v` fills a local tile (and so has a barrier after it).
bool uses_local_tile(const AppDescriptor& app, const Variant& v);

// Why this variant cannot run for `app` with launch shape `wg` (device limits aside).
std::optional<Verdict> check_variant(const Variant& v, const AppDescriptor& app, WorkGroup wg);
// Why an output scheme cannot run on a width x height grid (K beyond the side along its axis),
// as "rows:9 is larger than the 8x8 grid"; nothing when it fits. The command line refuses such a
// run before any work, and the runner makes a not_applicable row of it.
std::optional<std::string> output_misfit(const OutputScheme& output, int width, int height);
// The input scheme's verdict alone, for a radius.
std::optional<Verdict> check_variant(const Variant& v, int radius, WorkGroup wg);

// Where position p of an axis of n outputs takes its value under an output scheme of period k
// (SPEC 10: computed at k * j + k / 2): computed positions a and b mixed with weight w (a == b: a
// copy). nn takes the nearest (ties: the lower); li interpolates, nn past the outer lines.
struct OutputSource {
  int a, b;
  double w;
};
OutputSource output_source(int p, int n, int k, Recon recon);

// The model functions below take a launch shape and work on its block (wg.block()).

// CPU model of SPEC sections 3, 4 and 10: `iterations` app steps (fewer under launch
// perforation) on tiles filled by the variant, outputs computed and rebuilt by its output scheme.
// The load path does not change values; a relaxed barrier is modelled as kept.
// A user app has no C++ point function: `evaluate` then computes its outputs, given a grid of
// reconstructed tiles stacked one below the other, and returns the app's accurate output over it
// (AppTruth::run); the model reads the outputs whose windows lie inside one tile.
using GridEvaluator = std::function<GridD(const GridD&)>;
GridD model_run(const AppDescriptor& app, const Variant& v, WorkGroup wg, const GridD& input,
                const GridD* power, int iterations, const AppParams& params = {},
                const GridEvaluator& evaluate = {});

// The model of some work-groups alone (kperf tune --select canary): what model_run computes in
// their blocks, reading only the input around them: a width x height grid of floats in memory,
// or where `floats` is null, at(y, x) for a place inside the grid (a previous stage's outputs),
// as the device holds it before storage rounding.
using ElementAt = std::function<double(int y, int x)>;
struct ModelInput {
  int width = 0, height = 0;
  const float* floats = nullptr;  // row-major
  ElementAt at;
};
struct GroupOutputs {
  WorkGroup block;  // block_of(v, wg)
  // Per group (key(gy, gx)), its block's outputs row by row; NaN past the grid's end.
  std::map<std::int64_t, std::vector<double>> blocks;
  static std::int64_t key(int gy, int gx) {
    return (static_cast<std::int64_t>(gy) << 32) | static_cast<std::uint32_t>(gx);
  }
  // Output (y, x), NaN where its group was not computed.
  double at(int y, int x) const;
  // The block of group (gy, gx), or null.
  const std::vector<double>* find(int gy, int gx) const {
    const auto it = blocks.find(key(gy, gx));
    return it == blocks.end() ? nullptr : &it->second;
  }
};
// Outputs [y0, y1) x [x0, x1) of a block, in its own coordinates.
struct BlockRect {
  int y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  bool contains(int y, int x) const { return y >= y0 && y < y1 && x >= x0 && x < x1; }
};
// `groups` are (gy, gx) pairs, each once; with `windows` (one per group) only the outputs in a
// group's window are computed (and those the window's fill reads), the rest left NaN. Apps that
// iterate or read a second input (hotspot) are not modelled so (std::logic_error): their blocks
// depend on more than their neighbourhood.
GroupOutputs model_groups(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                          const ModelInput& input, const std::vector<std::pair<int, int>>& groups,
                          const AppParams& params = {}, const GridEvaluator& evaluate = {},
                          const std::vector<BlockRect>& windows = {});

// Which input elements work-group (group_x, group_y) reads from global memory (1 = read).
std::vector<char> elements_read_by_group(const Variant& v, int radius, WorkGroup wg, int width,
                                         int height, int group_x, int group_y);
// Which input elements any work-group reads.
std::vector<char> elements_read_by_any(const Variant& v, int radius, WorkGroup wg, int width,
                                       int height);
// Distinct input elements read at least once (the scheme's share of the bytes model).
double distinct_elements_read(const Variant& v, int radius, WorkGroup wg, int width, int height);

}  // namespace kperf
