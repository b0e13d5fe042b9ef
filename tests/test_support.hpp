// Shared helpers for kperf tests: a temporary directory, running configurations through the
// real Runner, and comparing outputs with a tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app_check.hpp"
#include "apps.hpp"
#include "cl_env.hpp"
#include "io.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "schemes.hpp"
#include "stats.hpp"
#include "storage_types.hpp"

namespace kperf::test {

namespace fs = std::filesystem;

using kperf::TempDir;

// The kernel root the tests build from: the source tree's (KPERF_TEST_KERNEL_ROOT, set by CMake),
// or $KPERF_TEST_KERNEL_DIR, a copy with one line mutated, on which tests/kernel_mutants_test.py
// shows a suite's comparison failing (docs/testing.md, "Known-bad kernels").
inline std::string kernel_root() {
  const char* dir = std::getenv("KPERF_TEST_KERNEL_DIR");
  return dir && *dir ? std::string(dir) : std::string(KPERF_TEST_KERNEL_ROOT);
}
}  // namespace kperf::test
// Every use of the macro in the tests goes through the override.
#undef KPERF_TEST_KERNEL_ROOT
#define KPERF_TEST_KERNEL_ROOT ::kperf::test::kernel_root()

namespace kperf::test {

// The device tests run on (KPERF_TEST_DEVICE selects; default: first GPU, else first
// device), or nullptr when there is no OpenCL platform.
inline ClEnv* test_env() {
  // Never destroyed: a context destroyed among the process's static objects corrupts Oclgrind's
  // heap (a device test run under Oclgrind aborted at exit, "corrupted double-linked list").
  static ClEnv* env = nullptr;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      auto entries = enumerate_devices();
      std::vector<DeviceInfo> infos;
      for (const auto& e : entries) infos.push_back(e.info);
      const char* sel = std::getenv("KPERF_TEST_DEVICE");
      env = new ClEnv(entries[choose_device(infos, parse_device_selector(sel ? sel : ""))]);
      // One program-binary cache for every test process (scripts/test.sh sets it), so each
      // distinct program is compiled once per suite, whatever the driver caches itself.
      if (const char* cache = std::getenv("KPERF_BINARY_CACHE"); cache && *cache) {
        std::filesystem::create_directories(cache);
        env->enable_binary_cache(cache, kernel_sources_salt(KPERF_TEST_KERNEL_ROOT));
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "no usable OpenCL device: %s\n", e.what());
    }
  }
  return env;
}

#define KPERF_REQUIRE_DEVICE()            \
  ClEnv* env = ::kperf::test::test_env(); \
  if (!env) GTEST_SKIP() << "no OpenCL platform/device: install pocl-opencl-icd to run this"

inline Grid random_grid(int w, int h, unsigned seed, float lo = 0.0f, float hi = 255.0f) {
  Grid g(w, h);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (float& v : g.data) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v = lo + (hi - lo) * static_cast<float>((s >> 11) * 0x1.0p-53);
  }
  return g;
}

using Outcome = OutputRun;

// Every app's name, in the registry's order (the parameters of per-app tests).
inline std::vector<std::string> all_app_names() {
  std::vector<std::string> names;
  for (const auto& a : app_registry()) names.push_back(a.name);
  return names;
}
// An app's place in the registry (a per-app salt for sampled tests).
inline std::size_t app_index(const AppDescriptor& app) {
  const auto& apps = app_registry();
  for (std::size_t i = 0; i < apps.size(); ++i)
    if (&apps[i] == &app) return i;
  return apps.size();
}

// Whether matrix tests cross every shape with every variant (KPERF_TEST_FULL=1, set by
// `scripts/test.sh --full`) or run a sample of the pairs (ShapeSample).
inline bool full_matrix() {
  const char* full = std::getenv("KPERF_TEST_FULL");
  return full && *full && std::string(full) != "0";
}

// The apps a per-app suite runs in the fast tier: those whose place in the registry plus the
// suite's salt is a multiple of 3 (gaussian3, sobel5, hotspot; sobel3, inversion; gaussian5,
// median, bilateral), so that every suite covers apps of different kinds and every app runs in
// several suites (docs/testing.md lists the pairs left to --full, and why). KPERF_TEST_FULL=1
// runs every app in every suite.
// KPERF_TEST_EVERY_APP=1 runs every app without the full matrix (tests/kernel_mutants_test.py
// runs a mutated kernel's app in whichever suite catches it).
inline bool app_sampled(const AppDescriptor& app, std::size_t salt) {
  const char* every = std::getenv("KPERF_TEST_EVERY_APP");
  return full_matrix() || (every && std::string(every) == "1") || (app_index(app) + salt) % 3 == 0;
}
#define KPERF_SAMPLE_APP(app, salt)           \
  if (!::kperf::test::app_sampled(app, salt)) \
  GTEST_SKIP() << app.name << ": another suite's app in the fast tier (KPERF_TEST_FULL=1 runs it)"

// The launch shapes a matrix test runs per variant. Variants are grouped by `key` (so that
// variants compared with each other, say the same scheme on two load paths, run the same
// shapes); each group takes `per` consecutive shapes of the list, the next group the next ones,
// starting `salt` shapes in (the app's index, so pairs differ between apps). Every shape runs as
// soon as there are enough groups; the full matrix takes every pair.
class ShapeSample {
 public:
  ShapeSample(const std::vector<Variant>& variants, std::function<std::string(const Variant&)> key,
              std::vector<WorkGroup> wgs, std::size_t per, std::size_t salt)
      : key_(std::move(key)), wgs_(std::move(wgs)), per_(per), salt_(salt) {
    for (const auto& v : variants) groups_.emplace(key_(v), groups_.size());
  }
  bool operator()(const Variant& v, const WorkGroup& wg) const {
    if (full_matrix() || per_ >= wgs_.size()) return true;
    const auto it = std::find(wgs_.begin(), wgs_.end(), wg);
    const auto group = groups_.find(key_(v));
    if (it == wgs_.end() || group == groups_.end()) return true;
    const std::size_t n = wgs_.size(), index = static_cast<std::size_t>(it - wgs_.begin());
    const std::size_t first = (group->second * per_ + salt_) % n;
    return (index + n - first) % n < per_;
  }

 private:
  std::function<std::string(const Variant&)> key_;
  std::vector<WorkGroup> wgs_;
  std::size_t per_, salt_;
  std::map<std::string, std::size_t> groups_;
};

// Runs apps x variants x wgs on `input` (and `power` for hotspot) through the real Runner,
// one untimed-warm-up launch, and reads every output back from its saved .npy. `only`, when
// given, picks the (variant, shape) pairs that run.
inline Outcome run_through_runner(ClEnv& env, const std::vector<const AppDescriptor*>& apps,
                                  const std::vector<Variant>& variants,
                                  const std::vector<WorkGroup>& wgs, const Grid& input,
                                  const Grid* power = nullptr, int iterations = 1,
                                  const std::string& kernel_root = KPERF_TEST_KERNEL_ROOT,
                                  bool transfers = false, const AppParams& params = {},
                                  const std::string& extra_build_options = "",
                                  std::function<bool(const Variant&, const WorkGroup&)> only = {}) {
  OutputRunOptions options;
  options.kernel_root = kernel_root;
  options.extra_build_options = extra_build_options;
  options.params = params;
  options.power = power;
  options.iterations = iterations;
  options.transfers = transfers;
  options.only = std::move(only);
  return run_for_outputs(env, apps, variants, wgs, input, options);
}

// Elements of `actual` outside the SPEC tolerance of `truth`: relative 1e-5 or absolute 1e-3 on
// the [0, 255] scale, whichever is larger. Outputs whose range exceeds 255 (Sobel 5x5 reaches
// about 2e4) have the absolute part scaled to their range, since float rounding of their sums
// scales with it. The message names the first few elements off.
// `stored`: the outputs were stored as this type, and the truth rounded to it. The device computes
// in float and then rounds, the model in double: where a value lies within float error of a
// rounding midpoint the two round to neighbours, so one unit in the stored type's last place is
// allowed (a half holds 226 and 226.125, nothing between).
inline ::testing::AssertionResult within_tolerance(const Grid& actual, const GridD& truth,
                                                   const StorageType* stored = nullptr) {
  if (actual.width != truth.width || actual.height != truth.height)
    return ::testing::AssertionFailure() << "size " << actual.width << "x" << actual.height
                                         << " != " << truth.width << "x" << truth.height;
  double lo = 0, hi = 0;
  for (double t : truth.data)
    if (std::isfinite(t)) lo = std::min(lo, t), hi = std::max(hi, t);
  const double abs_tol = 1e-3 * std::max(1.0, (hi - lo) / 255.0);
  std::size_t bad = 0;
  std::string first;
  for (int y = 0; y < truth.height; ++y)
    for (int x = 0; x < truth.width; ++x) {
      const double t = truth.at(y, x), a = actual.at(y, x);
      double tol = std::max(1e-5 * std::fabs(t), abs_tol);
      if (stored && stored->bytes < 4 && t != 0 && std::isfinite(t))
        tol = std::max(tol, std::ldexp(1.0, std::ilogb(t) - stored->mantissa_bits));
      if (!(std::fabs(a - t) <= tol)) {
        if (bad++ < 3)
          first += " (" + std::to_string(y) + "," + std::to_string(x) + "): " + std::to_string(a) +
                   " vs " + std::to_string(t) + ";";
      }
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements off:" << first;
}

// A sobel3 row of `scheme` at wx x wy on a 64^2 input, one sample of `median` ns.
inline ResultRow timed_row(const std::string& scheme, int wx, int wy, double median) {
  ResultRow r;
  r.app = "sobel3";
  r.scheme = scheme;
  r.recon = scheme == "accurate" ? "none" : "nn";
  r.wg_x = wx;
  r.wg_y = wy;
  r.input_name = "in";
  r.width = r.height = 64;
  r.key = make_key(r.app, r.scheme, r.recon, "", wx, wy, 1, 1, "in", 64, 64);
  r.samples_ns = {static_cast<std::uint64_t>(median)};
  r.time = summarize(r.samples_ns);
  return r;
}

// The axes lists of a variant matrix: schemes, reconstructions, load paths, output schemes and
// their reconstructions; every other axis at its default.
inline AxesSpec axes(const std::string& schemes, const std::string& recons,
                     const std::string& loads, const std::string& outputs = "none",
                     const std::string& output_recons = "nn") {
  AxesSpec a;
  a.schemes = schemes;
  a.recons = recons;
  a.loads = loads;
  a.outputs = outputs;
  a.output_recons = output_recons;
  return a;
}

}  // namespace kperf::test
