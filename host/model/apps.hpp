// Application descriptors (kernel file, radius, metric, inputs) and double-precision CPU
// references: the data the runner walks and the truth the tests hold kernels against.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kperf {

enum class Metric { kMre, kMe };
const char* metric_name(Metric metric);

// A row-major grid of doubles (CPU references and models).
struct GridD {
  int width = 0;
  int height = 0;
  std::vector<double> data;
  GridD() = default;
  GridD(int w, int h, double fill = 0.0)
      : width(w),
        height(h),
        data(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), fill) {}
  double at(int y, int x) const { return data[static_cast<std::size_t>(y) * width + x]; }
  double& at(int y, int x) { return data[static_cast<std::size_t>(y) * width + x]; }
};

// Rodinia hotspot's per-step coefficients for a grid of the given size (SPEC section 2).
struct HotspotCoefficients {
  double step_div_cap, rx_inv, ry_inv, rz_inv, amb_temp;
};
HotspotCoefficients hotspot_coefficients(int width, int height);
// Rodinia's explicit step is stable while step/Cap * (2/Rx + 2/Ry + 1/Rz) < 1. The factor grows
// with the cell count (step/Cap ~ N^2): about 0.14 at 512^2, 0.55 at 1024^2, above 1 from roughly
// 1450^2 on, where temperatures diverge (the timing stays meaningful, the errors do not).
double hotspot_stability_factor(int width, int height);

// The neighbourhood of one output element; (0, 0) is the element itself.
struct Window {
  const double* center;
  std::ptrdiff_t stride;
  double operator()(int dy, int dx) const { return center[dy * stride + dx]; }
};

// Parameters of an app that the command line can change: bilateral's sigmas (SPEC 11).
struct AppParams {
  double sigma_color = 25.0, sigma_space = 2.0;
};

// What a point function may need beyond the window (hotspot's power and coefficients, the app's
// parameters, the loop perforation of its window).
struct PointArgs {
  double power = 0.0;
  const HotspotCoefficients* hotspot = nullptr;
  const AppParams* params = nullptr;  // nullptr: the defaults
  int loop_skip = 1;                  // 2: every other window tap (loop-perforable apps)
};
using PointFn = double (*)(const Window&, const PointArgs&);

// How an app's work differs from one pass over one image, as data: the runner, the checks, the
// models and the tuner read these traits, never an app's name, so a second iterated or
// two-input app needs no change there. Hotspot has them all.
struct AppTraits {
  // --iterations launches per sample, each step reading the previous one's output: the output
  // buffers ping-pong, so input and output share one precision and the input is neither an
  // image nor host-packed. Launch perforation (--iterations-skip) applies to it alone.
  bool iterated = false;
  // A second input grid (hotspot's power) stored at the input's precision, kernel argument 4.
  bool second_input = false;
  // Float kernel arguments after the grids (hotspot's coefficients), made from the grid size.
  int float_args = 0;
  void (*make_float_args)(int width, int height, float* out) = nullptr;
  // A caveat for a grid size, copied onto every row (hotspot's explicit step diverges on large
  // grids); empty: none.
  std::string (*size_caveat)(int width, int height) = nullptr;
  // Its own inputs instead of --input images: the files of --temp/--power when given, else
  // generated at each size and named "synthetic-<own_inputs>". nullptr: the app takes images.
  const char* own_inputs = nullptr;
  void (*make_own_inputs)(int width, int height, std::vector<float>& first,
                          std::vector<float>& second) = nullptr;
};

struct AppDescriptor {
  // From the kernel's manifest (app_manifest.hpp): the same for built-in and user apps.
  std::string name;
  std::string kernel_file;  // a built-in's file in the kernel directory, a user app's path
  int radius = 0;           // halo radius of the stencil
  Metric primary_metric = Metric::kMre;
  bool accurate_uses_tile = true;  // false where the accurate kernel reads global memory directly
  std::string summary;
  std::optional<std::pair<double, double>> output_range;  // declared by the manifest
  // Registered in C++ for built-ins only.
  AppTraits traits;
  // One output from its window in double precision. nullptr for a user app: its truth is its own
  // accurate kernel compiled in double (app_truth.hpp).
  PointFn point = nullptr;
  // -D options carrying the app's parameters into its kernel (nullptr: none); with
  // double_literals, unsuffixed literals for the fp64 truth build.
  std::string (*param_options)(const AppParams&, bool double_literals) = nullptr;

  bool takes_images() const { return traits.own_inputs == nullptr; }
  bool user() const { return point == nullptr; }
};

// Every application: the built-ins in the papers' order, then user apps. Built-ins read their
// manifests from the kernel directory given to load_builtin_apps (on first use without it: the
// default beside the binary). The container keeps references valid as user apps are added.
const std::deque<AppDescriptor>& app_registry();
// (Re)reads the built-in manifests from <kernel_root>/kernels, dropping user apps. Throws
// std::invalid_argument naming a kernel file whose manifest is missing or wrong.
void load_builtin_apps(const std::string& kernel_root);
// Adds the app of one .cl file (see docs/user-apps.md). Throws std::invalid_argument with one
// line naming the file and the problem: unreadable, no or bad manifest, a radius that differs
// from its #define RADIUS, a name taken by a built-in or another user app.
const AppDescriptor& add_user_app(const std::string& path);
// Every *.cl file of `dir` (sorted by name) through add_user_app.
std::vector<const AppDescriptor*> add_user_app_dir(const std::string& dir);
// Throws std::invalid_argument naming the valid apps.
const AppDescriptor& find_app(const std::string& name);
std::string app_names_joined();

// Independent accurate reference of a built-in app: `iterations` steps (1 for image apps) computed
// from the clamp-to-edge padded input, without the tile model.
GridD reference_run(const AppDescriptor& app, const GridD& input, const GridD* power,
                    int iterations, const AppParams& params = {});

// The spatial weight of bilateral's tap at squared distance d2 (SPEC 11).
double bilateral_space_weight(int d2, double sigma_space);
// Throws std::invalid_argument unless "C,S" holds two positive finite numbers.
AppParams parse_bilateral_sigmas(const std::string& text);

GridD to_double(const std::vector<float>& values, int width, int height);

}  // namespace kperf
