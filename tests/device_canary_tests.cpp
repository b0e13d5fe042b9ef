// Device tests of the device canary (host/measure/device_canary.hpp) on the first OpenCL device
// (PoCL in CI): the sampled launch's groups are canary_groups' own, and the device canary's
// estimates equal the host canary's (InputCanary) on the same tiles for every app the canary
// models, every input scheme family, half and bfloat16 storage, output schemes under the fused
// and shared fills, host perforation, the image load path and a user app.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "app_truth.hpp"
#include "device_canary.hpp"
#include "input_canary.hpp"
#include "io.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

// An input with texture everywhere and a noisy quadrant (the host canary's test input), and in
// the bottom quarter a ramp from black on the left (truths at 0 and just above, which MRE's
// near-zero threshold sorts), at an odd size: partial blocks at both far edges, more groups than
// the sample takes.
Grid textured(int w, int h) {
  Grid in(w, h);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> noise(0, 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float v = y < h / 2 && x < w / 2
                    ? noise(rng)
                    : 100 + 50 * std::sin(0.13f * x + 0.07f * y) + 20 * std::cos(0.05f * x * y / w);
      if (y >= 3 * h / 4) v *= std::clamp((x - w / 4) / 40.0f, 0.0f, 1.0f);
      in.at(y, x) = v;
    }
  return in;
}

// One variant from one value of each axis.
Variant variant(const std::string& scheme, const std::string& recon, const std::string& precision,
                const std::string& output = "none", const std::string& output_recon = "nn",
                const std::string& fill = "fused", const std::string& load = "local",
                const std::string& perforate = "device") {
  AxesSpec a = test::axes(scheme, recon, load, output, output_recon);
  a.precisions = precision;
  a.output_fills = fill;
  a.perforates = perforate;
  return parse_variants(a).front();
}

// The rungs the tests draw from: every input scheme family, the storage types, output schemes
// along y, x and both (fused and shared fills), host perforation and the image load path, at
// blocks of 16 x 8 (the accurate kernel's launch shared) and 32 x 8.
struct Family {
  const char* name;
  Variant v;
  WorkGroup wg;
};
std::vector<Family> families() {
  return {{"stencil", variant("stencil", "nn", "f32"), {16, 8, 1, 1}},
          {"rows:2/nn", variant("rows:2", "nn", "f32"), {16, 8, 1, 1}},
          {"cols:3/li", variant("cols:3", "li", "f32"), {8, 8, 2, 1}},
          {"rows:3/li/f16", variant("rows:3", "li", "f16"), {16, 4, 1, 2}},
          {"out:rows:2/li", variant("stencil", "nn", "f32", "rows:2", "li"), {16, 4, 1, 1}},
          {"rows:2/out:cols:2/shared",
           variant("rows:2", "nn", "f32", "cols:2", "nn", "shared"),
           {8, 8, 1, 1}},
          {"out:center:2/f16in", variant("accurate", "nn", "f16in", "center:2", "nn"), {8, 4}},
          {"rows:2/host/bf16",
           variant("rows:2", "nn", "bf16", "none", "nn", "fused", "local", "host"),
           {32, 4, 1, 2}},
          {"cols:2/image",
           variant("cols:2", "nn", "f32", "none", "nn", "fused", "image"),
           {8, 8, 4, 1}}};
}

CanarySettings test_settings() {
  CanarySettings s;
  s.min_tiles = 64;
  return s;
}

// The device canary's estimates against the host canary's, rung by rung: the same windows (tiles,
// elements, population exactly) and the estimate and margin within float rounding. The host
// compares with the double truth and the double model of the rung stored as a float, the device
// with the float accurate kernel and the float rung, its window sums in float: per element they
// differ by a few float roundings, and over every app and rung family here the estimates differed
// by at most 1.3e-6 of their value (gaussian3 under stencil) and 1.2e-8 in absolute terms
// (inversion's exact stencil rung: the host's float output against its double truth), the margins
// by less. 1e-7 + 1e-5 of the value holds that with a factor of ten; a wrong tile or window moves
// an estimate by the error's own size, some 1e-2.
::testing::AssertionResult same_estimates(const CanaryEstimate& device, const CanaryEstimate& host,
                                          const std::string& label) {
  auto close = [](double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(a - b) <= 1e-7 + 1e-5 * std::fabs(b);
  };
  if (device.tiles != host.tiles || device.elements != host.elements ||
      device.population != host.population || !close(device.estimate, host.estimate) ||
      !close(device.margin, host.margin))
    return ::testing::AssertionFailure()
           << label << ": device estimate " << device.estimate << " margin " << device.margin
           << " tiles " << device.tiles << " elements " << device.elements << "; host "
           << host.estimate << " margin " << host.margin << " tiles " << host.tiles << " elements "
           << host.elements;
  return ::testing::AssertionSuccess();
}

// The sampled launch computes canary_groups' groups, in cell order, and under an output scheme the
// group before each along its axes; every other id reads as the whole launch's.
TEST(DeviceCanary, SampledLaunchDrawsTheCanarysGroups) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceCanary::unsupported(*env)) GTEST_SKIP() << *why;
  const std::string source = R"(
inline size_t launch_group(uint d) { return get_group_id(d); }
inline size_t launch_groups(uint d) { return get_num_groups(d); }
#include "groups_sampled.cl"
__kernel void ids(__global int* out) {
  const size_t cell = (launch_group(2) * launch_groups(1) + launch_group(1)) * launch_groups(0) +
                      launch_group(0);
  if (get_local_id(0) == 0 && get_local_id(1) == 0) {
    out[4 * cell] = (int)get_group_id(1);
    out[4 * cell + 1] = (int)get_group_id(0);
    out[4 * cell + 2] = (int)(get_num_groups(1) * 100000 + get_num_groups(0));
    out[4 * cell + 3] = (int)(get_global_id(0) + get_global_offset(1) + get_group_id(2));
  }
})";
  const std::string include = " -I " + std::string(KPERF_TEST_KERNEL_ROOT) + "/schemes";
  const std::uint64_t seeds[] = {7, 0xfedcba9876543210ULL, 0xffffffffffffffffULL};
  struct Case {
    int groups_x, groups_y, count;
  };
  int compared = 0;
  for (const Case c :
       {Case{100, 40, 64}, Case{7, 5, 1000}, Case{37, 3, 16}, Case{3, 50, 9}, Case{16383, 2, 40}})
    for (const std::uint64_t seed : seeds)
      for (const int ky : {1, 2}) {
        const cl::Program program =
            env->build(source, "-cl-std=CL1.2 -DKPERF_SAMPLED_LEFT=0 -DKPERF_SAMPLED_UP=" +
                                   std::to_string(ky > 1 ? 1 : 0) + include);
        const CanaryLattice l = canary_lattice(c.groups_x, c.groups_y, c.count);
        const auto groups = canary_groups(c.groups_x, c.groups_y, c.count, seed);
        const std::size_t cells = static_cast<std::size_t>(l.cells_x) * l.cells_y;
        ASSERT_EQ(groups.size(), cells);
        std::vector<cl_int> got(4 * cells * ky, -1);
        cl::Buffer out(env->context(), CL_MEM_READ_WRITE, got.size() * sizeof(cl_int));
        cl::Kernel k(program, "ids");
        k.setArg(0, out);
        const auto o = DeviceCanary::launch_offset(l, seed);
        env->queue().enqueueNDRangeKernel(k, cl::NDRange(o[0], o[1], o[2]),
                                          cl::NDRange(2 * l.cells_x, 2 * l.cells_y, ky),
                                          cl::NDRange(2, 2, 1));
        env->queue().enqueueReadBuffer(out, CL_TRUE, 0, got.size() * sizeof(cl_int), got.data());
        for (std::size_t i = 0; i < cells * ky; ++i) {
          const auto [gy, gx] = groups[i % cells];
          const int up = i >= cells ? 1 : 0;  // the group before along y
          ASSERT_EQ(got[4 * i], std::max(gy - up, 0)) << "cell " << i << " seed " << seed;
          ASSERT_EQ(got[4 * i + 1], gx) << "cell " << i << " seed " << seed;
          ASSERT_EQ(got[4 * i + 2], c.groups_y * 100000 + c.groups_x);
          ASSERT_EQ(got[4 * i + 3], 2 * gx);  // global id 2 gx, offset 0, group id 0 along z
          ++compared;
        }
      }
  EXPECT_GT(compared, 1000);
  EXPECT_THROW(DeviceCanary::launch_offset({65536, 2, 4, 1}, 1), std::invalid_argument);
}

class DeviceCanaryApp : public ::testing::TestWithParam<std::string> {};

// Every rung family on one app (the fast tier: two of them, a different pair per app, so that
// every family runs on some app), one ladder, one canary; each rung's estimate equals the host
// canary's on the same tiles.
TEST_P(DeviceCanaryApp, EqualsTheHostCanary) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceCanary::unsupported(*env)) GTEST_SKIP() << *why;
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = find_app(GetParam());
  if (auto why = canary_problem({&app, parse_scheme("accurate"), {16, 8}}))
    GTEST_SKIP() << "the canary does not model " << app.name << ": " << *why;
  const std::vector<Family> all = families();
  std::vector<Family> chosen;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (test::full_matrix() || (i + 9 - 2 * test::app_index(app) % 9) % 9 < 2)
      chosen.push_back(all[i]);
  std::vector<CanaryStage> rungs;
  for (const Family& f : chosen) rungs.push_back({&app, f.v, f.wg});
  const Grid in = textured(203, 157);
  const std::uint64_t seed = canary_seed("textured") + test::app_index(app);
  DeviceCanary canary(*env, KPERF_TEST_KERNEL_ROOT, test_settings());
  const DeviceCanaryRun run = canary.estimate(in, seed, rungs);
  ASSERT_EQ(run.estimates.size(), rungs.size());
  EXPECT_GT(run.device_ns, 0);
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    InputCanary host(in, test_settings(), seed);
    const CanaryEstimate h = host.estimate({rungs[i]});
    EXPECT_TRUE(same_estimates(run.estimates[i], h, app.name + " " + chosen[i].name));
    EXPECT_GT(h.estimate, 0) << chosen[i].name;  // an error to be estimated: a wrong tile shows
    EXPECT_TRUE(std::isfinite(h.margin)) << chosen[i].name;
  }
}

std::vector<std::string> canary_app_names() {
  std::vector<std::string> names;
  for (const std::string& name : test::all_app_names())
    if (!canary_problem({&find_app(name), parse_scheme("accurate"), {16, 8}}))
      names.push_back(name);
  return names;
}
INSTANTIATE_TEST_SUITE_P(AllApps, DeviceCanaryApp, ::testing::ValuesIn(canary_app_names()));

// A user app (the example Laplacian, ME): the host canary evaluates it with its fp64 truth
// kernel, the device canary with its float accurate kernel.
TEST(DeviceCanary, UserAppEqualsTheHostCanary) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceCanary::unsupported(*env)) GTEST_SKIP() << *why;
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app =
      add_user_app(std::string(KPERF_TEST_SOURCE_DIR) + "/examples/apps/laplacian3.cl");
  AppTruth truth(*env, app, KPERF_TEST_KERNEL_ROOT);
  const std::vector<Family> all = families();
  const std::vector<CanaryStage> rungs = {{&app, all[2].v, all[2].wg}, {&app, all[4].v, all[4].wg}};
  const Grid in = textured(203, 157);
  DeviceCanary canary(*env, KPERF_TEST_KERNEL_ROOT, test_settings());
  const DeviceCanaryRun run = canary.estimate(in, 11, rungs);
  ASSERT_EQ(run.estimates.size(), rungs.size());
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    InputCanary host(in, test_settings(), 11, {},
                     {[&truth](const GridD& g) { return truth.run(g); }});
    const CanaryEstimate h = host.estimate({rungs[i]});
    EXPECT_TRUE(same_estimates(run.estimates[i], h, "laplacian3 " + rungs[i].variant.id()));
    EXPECT_GT(h.estimate, 0);
  }
}

// A ladder small enough for Oclgrind (tests/oclgrind_test.py runs it under every check): on a
// 40 x 24 grid, 4 of the 9 groups, a half-storage rung and an output scheme along both axes
// (whose launch adds the groups above, to the left and diagonal).
TEST(DeviceCanary, SmallLadderForOclgrind) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceCanary::unsupported(*env)) GTEST_SKIP() << *why;
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = find_app("gaussian3");
  CanarySettings s;
  s.min_tiles = 4;
  const std::vector<CanaryStage> rungs = {
      {&app, variant("rows:2", "nn", "f16"), {16, 4, 1, 2}},
      {&app, variant("stencil", "nn", "f32", "center:2", "li"), {8, 4}}};
  const Grid in = textured(40, 24);
  DeviceCanary canary(*env, KPERF_TEST_KERNEL_ROOT, s);
  const DeviceCanaryRun run = canary.estimate(in, 5, rungs);
  ASSERT_EQ(run.estimates.size(), rungs.size());
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    const CanaryEstimate h = InputCanary(in, s, 5).estimate({rungs[i]});
    EXPECT_EQ(h.tiles, 4);
    EXPECT_TRUE(same_estimates(run.estimates[i], h, rungs[i].variant.id()));
  }
}

// A ladder of K rungs on B blocks and S output storages takes B accurate launches, K rung
// launches, one launch of the windows' maxima and S of their sums, and rungs the device cannot
// sample are refused by name.
TEST(DeviceCanary, LaunchesAndRefusals) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceCanary::unsupported(*env)) GTEST_SKIP() << *why;
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = find_app("gaussian3");
  const std::vector<Family> all = families();
  // Blocks 16 x 8 and 32 x 8; storages f32 and bf16.
  const std::vector<CanaryStage> rungs = {
      {&app, all[0].v, all[0].wg}, {&app, all[1].v, all[1].wg}, {&app, all[7].v, all[7].wg}};
  DeviceCanary canary(*env, KPERF_TEST_KERNEL_ROOT, test_settings());
  const DeviceCanaryRun run = canary.estimate(textured(203, 157), 3, rungs);
  EXPECT_EQ(run.launches, 2 + 3 + 1 + 2);
  EXPECT_GT(run.device_ns, 0);
  EXPECT_LE(run.busy_ns, run.device_ns * 1.0001);
  // The separate fill and overlapping blocks (the shared fill's li on the accurate input).
  const CanaryStage separate{
      &app, variant("rows:2", "nn", "f32", "rows:2", "nn", "separate"), {16, 4}};
  const CanaryStage overlap{
      &app, variant("accurate", "nn", "f32", "rows:2", "li", "shared"), {16, 4}};
  ASSERT_TRUE(DeviceCanary::problem(separate).has_value());
  EXPECT_NE(DeviceCanary::problem(separate)->find("separate fill"), std::string::npos);
  ASSERT_TRUE(DeviceCanary::problem(overlap).has_value());
  EXPECT_NE(DeviceCanary::problem(overlap)->find("overlap"), std::string::npos);
  EXPECT_THROW(canary.estimate(textured(64, 48), 3, {separate}), std::invalid_argument);
  // One app's ladder: the accurate outputs of one app fill one truth grid.
  EXPECT_THROW(
      canary.estimate(textured(64, 48), 3, {rungs[0], {&find_app("sobel3"), all[0].v, all[0].wg}}),
      std::invalid_argument);
  EXPECT_FALSE(DeviceCanary::problem(rungs[0]).has_value());
}

}  // namespace
}  // namespace kperf
