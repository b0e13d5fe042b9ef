// Application descriptors and their double-precision CPU references (SPEC section 2).
#include "apps.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app_manifest.hpp"
#include "kernel_root.hpp"
#include "parallel.hpp"
#include "synthetic.hpp"

namespace kperf {

namespace fs = std::filesystem;

const char* metric_name(Metric metric) { return metric == Metric::kMre ? "mre" : "me"; }

HotspotCoefficients hotspot_coefficients(int width, int height) {
  // Rodinia hotspot constants.
  const double t_chip = 0.0005, chip_height = 0.016, chip_width = 0.016, amb_temp = 80.0;
  const double max_pd = 3.0e6, precision = 0.001, spec_heat_si = 1.75e6, k_si = 100.0;
  const double factor_chip = 0.5;
  const double grid_height = chip_height / height;
  const double grid_width = chip_width / width;
  const double cap = factor_chip * spec_heat_si * t_chip * grid_width * grid_height;
  const double rx = grid_width / (2.0 * k_si * t_chip * grid_height);
  const double ry = grid_height / (2.0 * k_si * t_chip * grid_width);
  const double rz = t_chip / (k_si * grid_height * grid_width);
  const double max_slope = max_pd / (factor_chip * t_chip * spec_heat_si);
  const double step = precision / max_slope;
  return {step / cap, 1.0 / rx, 1.0 / ry, 1.0 / rz, amb_temp};
}

double hotspot_stability_factor(int width, int height) {
  const HotspotCoefficients c = hotspot_coefficients(width, height);
  return c.step_div_cap * (2.0 * c.rx_inv + 2.0 * c.ry_inv + c.rz_inv);
}

namespace {

template <int N>
double separable(const Window& w, const double (&along_y)[N], const double (&along_x)[N]) {
  constexpr int r = N / 2;
  double sum = 0.0;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) sum += along_y[dy + r] * along_x[dx + r] * w(dy, dx);
  return sum;
}

constexpr double kBinomial3[3] = {1, 2, 1};
constexpr double kDeriv3[3] = {-1, 0, 1};
constexpr double kBinomial5[5] = {1, 4, 6, 4, 1};
constexpr double kDeriv5[5] = {-1, -2, 0, 2, 1};

double gaussian3(const Window& w, const PointArgs&) {
  return separable(w, kBinomial3, kBinomial3) / 16.0;
}
double gaussian5(const Window& w, const PointArgs&) {
  return separable(w, kBinomial5, kBinomial5) / 256.0;
}
double sobel3(const Window& w, const PointArgs&) {
  const double gx = separable(w, kBinomial3, kDeriv3);
  const double gy = separable(w, kDeriv3, kBinomial3);
  return std::sqrt(gx * gx + gy * gy);
}
double sobel5(const Window& w, const PointArgs&) {
  const double gx = separable(w, kBinomial5, kDeriv5);
  const double gy = separable(w, kDeriv5, kBinomial5);
  return std::sqrt(gx * gx + gy * gy);
}
double median3(const Window& w, const PointArgs&) {
  double v[9];
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) v[n++] = w(dy, dx);
  std::nth_element(v, v + 4, v + 9);
  return v[4];
}
double inversion(const Window& w, const PointArgs&) { return 255.0 - w(0, 0); }
double hotspot(const Window& w, const PointArgs& a) {
  const HotspotCoefficients& c = *a.hotspot;
  const double t = w(0, 0);
  return t +
         c.step_div_cap * (a.power + (w(1, 0) + w(-1, 0) - 2.0 * t) * c.ry_inv +
                           (w(0, 1) + w(0, -1) - 2.0 * t) * c.rx_inv + (c.amb_temp - t) * c.rz_inv);
}

// SPEC 11: OpenCV's round window of d = 5, visited in row-major order; with loop perforation
// only every loop_skip-th tap of that order, renormalised by the visited weights.
double bilateral(const Window& w, const PointArgs& a) {
  const AppParams p = a.params ? *a.params : AppParams{};
  const double center = w(0, 0);
  double sum = 0.0, norm = 0.0;
  int index = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      const int d2 = dy * dy + dx * dx;
      if (d2 > 4) continue;
      if (index++ % a.loop_skip != 0) continue;
      const double q = w(dy, dx), diff = q - center;
      const double weight = bilateral_space_weight(d2, p.sigma_space) *
                            std::exp(-diff * diff / (2.0 * p.sigma_color * p.sigma_color));
      sum += weight * q;
      norm += weight;
    }
  return sum / norm;
}

std::string bilateral_options(const AppParams& p, bool double_literals) {
  // Float literals for the kernels; plain (double) ones with every digit for the fp64 truth.
  const char* f = double_literals ? "" : "f";
  const int digits = double_literals ? 17 : 9;
  char text[480];
  std::snprintf(text, sizeof text,
                "-DBILATERAL_SIGMA_COLOR=%.*e%s -DBILATERAL_SIGMA_SPACE=%.*e%s "
                "-DBILATERAL_SPACE_W0=%.*e%s -DBILATERAL_SPACE_W1=%.*e%s "
                "-DBILATERAL_SPACE_W2=%.*e%s -DBILATERAL_SPACE_W4=%.*e%s",
                digits, p.sigma_color, f, digits, p.sigma_space, f, digits,
                bilateral_space_weight(0, p.sigma_space), f, digits,
                bilateral_space_weight(1, p.sigma_space), f, digits,
                bilateral_space_weight(2, p.sigma_space), f, digits,
                bilateral_space_weight(4, p.sigma_space), f);
  return text;
}

}  // namespace

double bilateral_space_weight(int d2, double sigma_space) {
  return std::exp(-d2 / (2.0 * sigma_space * sigma_space));
}

AppParams parse_bilateral_sigmas(const std::string& text) {
  const auto comma = text.find(',');
  auto number = [&](const std::string& part, const char* what) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || !std::isfinite(v) || v <= 0)
      throw std::invalid_argument("--bilateral-sigmas '" + text + "': " + what +
                                  " must be a positive number (expected C,S, e.g. 25,2)");
    return v;
  };
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw std::invalid_argument("--bilateral-sigmas '" + text +
                                "': expected two numbers C,S (e.g. 25,2)");
  AppParams p;
  p.sigma_color = number(text.substr(0, comma), "sigma_color");
  p.sigma_space = number(text.substr(comma + 1), "sigma_space");
  return p;
}

namespace {

// Hotspot's traits: iterated, the power grid, five coefficients, a caveat where the explicit
// step diverges, and a synthetic chip when no Rodinia files are given.
void hotspot_float_args(int width, int height, float* out) {
  const HotspotCoefficients c = hotspot_coefficients(width, height);
  const double values[5] = {c.step_div_cap, c.rx_inv, c.ry_inv, c.rz_inv, c.amb_temp};
  for (int i = 0; i < 5; ++i) out[i] = static_cast<float>(values[i]);
}

std::string hotspot_caveat(int width, int height) {
  const double factor = hotspot_stability_factor(width, height);
  if (factor < 1.0) return {};
  char text[256];
  std::snprintf(text, sizeof text,
                "Rodinia's explicit step is unstable at %dx%d (factor %.2f >= 1): temperatures "
                "diverge, so errors are not meaningful; timings are",
                width, height, factor);
  return text;
}

void synthetic_chip(int width, int height, std::vector<float>& temp, std::vector<float>& power) {
  HotspotInput chip = make_synthetic_chip(width, height);
  temp = std::move(chip.temp.data);
  power = std::move(chip.power.data);
}

const AppTraits kHotspotTraits{true,   true,          5, hotspot_float_args, hotspot_caveat,
                               "chip", synthetic_chip};

}  // namespace

namespace {

// What a built-in registers in C++: its reference and what its manifest cannot say.
struct BuiltinApp {
  const char* name;  // also its kernel file, <name>.cl
  PointFn point;
  AppTraits traits;
  std::string (*param_options)(const AppParams&, bool double_literals);
};

const BuiltinApp kBuiltins[] = {
    {"gaussian3", gaussian3, {}, nullptr},
    {"gaussian5", gaussian5, {}, nullptr},
    {"sobel3", sobel3, {}, nullptr},
    {"sobel5", sobel5, {}, nullptr},
    {"median", median3, {}, nullptr},
    {"inversion", inversion, {}, nullptr},
    {"hotspot", hotspot, kHotspotTraits, nullptr},
    {"bilateral", bilateral, {}, bilateral_options},
};

AppDescriptor from_manifest(const AppManifest& m, std::string kernel_file) {
  AppDescriptor app;
  app.name = m.name;
  app.kernel_file = std::move(kernel_file);
  app.radius = m.radius;
  app.primary_metric = m.metric == "me" ? Metric::kMe : Metric::kMre;
  app.accurate_uses_tile = m.accurate_uses_tile;
  app.summary = m.summary;
  app.output_range = m.range;
  return app;
}

struct Registry {
  std::deque<AppDescriptor> apps;
  bool loaded = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void load_builtin_apps(const std::string& kernel_root) {
  std::deque<AppDescriptor> apps;
  for (const BuiltinApp& b : kBuiltins) {
    const std::string file = std::string(b.name) + ".cl";
    const std::string path = (fs::path(kernel_root) / "kernels" / file).string();
    const AppManifest m = read_app_file(path).first;
    if (m.name != b.name)
      throw std::invalid_argument("app file " + path + ": @name " + m.name +
                                  " differs from the built-in app " + b.name);
    AppDescriptor app = from_manifest(m, file);
    app.traits = b.traits;
    app.point = b.point;
    app.param_options = b.param_options;
    apps.push_back(std::move(app));
  }
  Registry& r = registry();
  r.apps = std::move(apps);
  r.loaded = true;
}

const std::deque<AppDescriptor>& app_registry() {
  Registry& r = registry();
  if (!r.loaded) load_builtin_apps(default_kernel_root().string());
  return r.apps;
}

const AppDescriptor& add_user_app(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw std::invalid_argument(
        "app file " + path + (fs::exists(path, ec) ? ": not a regular file" : ": does not exist"));
  const AppManifest m = read_app_file(path).first;
  for (const AppDescriptor& a : app_registry())
    if (a.name == m.name)
      throw std::invalid_argument(
          "app file " + path + ": @name " + m.name + " is taken by " +
          (a.user() ? "the user app in " + a.kernel_file : std::string("a built-in app")));
  registry().apps.push_back(from_manifest(m, fs::absolute(path).lexically_normal().string()));
  return registry().apps.back();
}

std::vector<const AppDescriptor*> add_user_app_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::invalid_argument("--app-dir " + dir + ": not a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".cl") files.push_back(entry.path().string());
  if (ec) throw std::invalid_argument("--app-dir " + dir + ": cannot be read");
  if (files.empty()) throw std::invalid_argument("--app-dir " + dir + ": holds no .cl file");
  std::sort(files.begin(), files.end());
  std::vector<const AppDescriptor*> added;
  for (const std::string& f : files) added.push_back(&add_user_app(f));
  return added;
}

std::string app_names_joined() {
  std::string names;
  for (const auto& a : app_registry()) names += (names.empty() ? "" : ", ") + a.name;
  return names;
}

const AppDescriptor& find_app(const std::string& name) {
  for (const auto& a : app_registry())
    if (name == a.name) return a;
  throw std::invalid_argument("unknown app '" + name + "' (valid: " + app_names_joined() +
                              ", all)");
}

GridD to_double(const std::vector<float>& values, int width, int height) {
  GridD g(width, height);
  std::copy(values.begin(), values.end(), g.data.begin());
  return g;
}

GridD reference_run(const AppDescriptor& app, const GridD& input, const GridD* power,
                    int iterations, const AppParams& params) {
  if (!app.point)
    throw std::logic_error("reference_run: " + app.name + " has no C++ reference (app_truth.hpp)");
  const int w = input.width, h = input.height, r = app.radius;
  const int pw = w + 2 * r;
  const HotspotCoefficients coef = hotspot_coefficients(w, h);
  GridD current;  // the state after each iteration; the first reads `input` itself
  GridD padded(pw, h + 2 * r);
  for (int it = 0; it < std::max(1, iterations); ++it) {
    const GridD& from = it == 0 ? input : current;
    parallel_chunks(h + 2 * r, host_threads_for(static_cast<long>(pw) * (h + 2 * r)),
                    [&](int, long y0, long y1) {
                      for (int y = static_cast<int>(y0); y < y1; ++y)
                        for (int x = 0; x < pw; ++x)
                          padded.at(y, x) =
                              from.at(std::clamp(y - r, 0, h - 1), std::clamp(x - r, 0, w - 1));
                    });
    GridD next(w, h);
    parallel_chunks(h, host_threads(), [&](int, long y0, long y1) {
      for (int y = static_cast<int>(y0); y < y1; ++y)
        for (int x = 0; x < w; ++x) {
          PointArgs args;
          args.hotspot = &coef;
          args.params = &params;
          if (power) args.power = power->at(y, x);
          next.at(y, x) = app.point(Window{&padded.at(y + r, x + r), pw}, args);
        }
    });
    current = std::move(next);
  }
  return current;
}

}  // namespace kperf
