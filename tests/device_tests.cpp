// Device tests on the first OpenCL device (PoCL in CI): kernels against the CPU references and
// the CPU scheme models, NaN poisoning of skipped elements, canary bands, failure rows.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "app_truth.hpp"
#include "apps.hpp"
#include "cache_probe.hpp"
#include "cli.hpp"
#include "device_metrics.hpp"
#include "kernel_axes.hpp"
#include "metrics.hpp"
#include "program_sources.hpp"
#include "schemes.hpp"
#include "sha256.hpp"
#include "storage.hpp"
#include "synthetic.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;

using test::Outcome;
using test::TempDir;

// A real photo when datasets/fetch_images.sh has run, else a natural-looking synthetic field.
Grid photo(int w, int h) {
  const fs::path camera = fs::path(KPERF_TEST_SOURCE_DIR) / "datasets/images/camera.png";
  if (fs::exists(camera)) return resize_bilinear(read_image(camera.string()), w, h);
  return make_synthetic_image("smooth", w, h);
}

std::vector<const AppDescriptor*> one_app(const char* name) { return {&find_app(name)}; }

void expect_all_ok(const Outcome& o) {
  for (const auto& r : o.rows)
    EXPECT_EQ(r.status, Status::kOk) << r.key << ": " << r.reason << r.build_log;
}

TEST(Gaussian3, MatchesReferenceOnRandomAndPhotoInputs) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{16, 8}, {8, 4}, {32, 1}, {8, 8, 4}, {8, 2, 4, 4}};
  const std::vector<std::pair<int, int>> sizes = {{1, 1}, {7, 5}, {509, 317}, {512, 512}};
  const AppDescriptor& app = find_app("gaussian3");
  for (const auto& [w, h] : sizes)
    for (int kind = 0; kind < 2; ++kind) {
      const Grid in = kind == 0 ? test::random_grid(w, h, 11) : photo(w, h);
      const Outcome o =
          test::run_through_runner(*env, {&app}, parse_variants("accurate", "nn"), wgs, in);
      ASSERT_EQ(o.rows.size(), wgs.size());
      expect_all_ok(o);  // ok implies the canary bands around the output were untouched
      const GridD ref = reference_run(app, to_double(in.data, w, h), nullptr, 1);
      for (const auto& [key, out] : o.outputs) EXPECT_TRUE(test::within_tolerance(out, ref)) << key;
    }
}

// Every app, accurate, against its double-precision reference at odd sizes and shapes.
class AccurateApp : public ::testing::TestWithParam<std::string> {};

TEST_P(AccurateApp, MatchesReferenceAtOddSizes) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  const std::vector<WorkGroup> wgs = {{16, 8},   {8, 4},    {32, 1},      {5, 3},
                                      {8, 4, 4}, {3, 2, 2}, {4, 2, 4, 3}, {8, 1, 1, 4}};
  // 136 = 4 * 34: rows 16-byte aligned, so vec 4 takes its float4 paths inside the grid.
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{37, 23}, {136, 67}, {1, 9}}) {
    Grid in = test::random_grid(w, h, 21);
    std::optional<Grid> power;
    int iterations = 1;
    if (app.traits.iterated) {
      HotspotInput chip = make_synthetic_chip(w, h);
      in = chip.temp;
      power = chip.power;
      iterations = 5;
    }
    const Outcome o = test::run_through_runner(*env, {&app}, parse_variants("accurate", "nn"), wgs,
                                               in, power ? &*power : nullptr, iterations);
    expect_all_ok(o);
    GridD pw;
    if (power) pw = to_double(power->data, w, h);
    const GridD ref =
        reference_run(app, to_double(in.data, w, h), power ? &pw : nullptr, iterations);
    ASSERT_EQ(o.outputs.size(), wgs.size());
    for (const auto& [key, out] : o.outputs) EXPECT_TRUE(test::within_tolerance(out, ref)) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(AllApps, AccurateApp, ::testing::ValuesIn(test::all_app_names()));

// Every app x scheme x reconstruction against the CPU model of the scheme, each at three of the
// nine launch shapes (every shape for some scheme; all of them with KPERF_TEST_FULL=1).
class PerforatedApp : public ::testing::TestWithParam<std::string> {};

TEST_P(PerforatedApp, MatchesSchemeModel) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 0);
  const std::vector<WorkGroup> wgs = {{16, 8},   {8, 4},    {32, 2},      {4, 1},      {8, 4, 4},
                                      {4, 8, 4}, {5, 2, 2}, {8, 2, 4, 2}, {4, 1, 1, 3}};
  const auto variants = parse_variants("stencil,rows:2,rows:3,rows:4,cols:2,cols:3", "nn,li");
  const test::ShapeSample sample(
      variants, [](const Variant& v) { return v.label(); }, wgs, 3, test::app_index(app));
  for (const int w : {45, 100}) {  // 100: float4-aligned rows, vector paths in interior groups
    const int h = 37;
    Grid in = test::random_grid(w, h, 31);
    std::optional<Grid> power;
    const int iterations = app.traits.iterated ? 3 : 1;
    if (app.traits.iterated) {
      HotspotInput chip = make_synthetic_chip(w, h);
      in = chip.temp;
      power = chip.power;
    }
    const Outcome o =
        test::run_through_runner(*env, {&app}, variants, wgs, in, power ? &*power : nullptr,
                                 iterations, KPERF_TEST_KERNEL_ROOT, false, {}, "", sample);
    const GridD in_d = to_double(in.data, w, h);
    GridD pw;
    if (power) pw = to_double(power->data, w, h);
    int checked = 0;
    for (const auto& v : variants)
      for (const auto& wg : wgs) {
        if (!sample(v, wg)) continue;
        const ResultRow* row = o.find(app.name, v, wg);
        ASSERT_NE(row, nullptr);
        const auto verdict = check_variant(v, app.radius, wg);
        if (verdict) {
          EXPECT_EQ(row->status, verdict->status) << row->key;
          continue;
        }
        ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
        const GridD model = model_run(app, v, wg, in_d, power ? &pw : nullptr, iterations);
        EXPECT_TRUE(test::within_tolerance(o.outputs.at(row->key), model)) << row->key;
        ++checked;
      }
    EXPECT_GE(checked, 12);
  }
}

INSTANTIATE_TEST_SUITE_P(AllApps, PerforatedApp, ::testing::ValuesIn(test::all_app_names()));

// The differential probes of `--cl-options`. Loads-only stores each output's own window element:
// the CPU model of the scheme for an app whose point function is its centre, on every shape. With
// no loads, the input is never read: a NaN input leaves every output finite.
TEST(Probes, LoadsOnlyIsTheSchemesInputAndNoLoadsNeverReadsTheInput) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{16, 8}, {8, 4}, {8, 4, 4}, {8, 2, 4, 3}, {4, 1, 1, 2}};
  const auto variants = parse_variants("accurate,stencil,rows:2,rows:3,cols:2", "nn,li");
  const Grid in = test::random_grid(100, 37, 41);
  const GridD in_d = to_double(in.data, in.width, in.height);
  for (const char* name : test::full_matrix() ? std::vector<const char*>{"gaussian5", "median"}
                                              : std::vector<const char*>{"gaussian5"}) {
    AppDescriptor centre = find_app(name);
    centre.point = [](const Window& w, const PointArgs&) { return w(0, 0); };
    const Outcome o =
        test::run_through_runner(*env, {&find_app(name)}, variants, wgs, in, nullptr, 1,
                                 KPERF_TEST_KERNEL_ROOT, false, {}, "-DKPERF_PROBE_LOADS_ONLY=1");
    int checked = 0;
    for (const auto& v : variants)
      for (const auto& wg : wgs) {
        const ResultRow* row = o.find(name, v, wg);
        ASSERT_NE(row, nullptr);
        if (check_variant(v, centre.radius, wg)) continue;
        ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
        EXPECT_TRUE(test::within_tolerance(o.outputs.at(row->key),
                                           model_run(centre, v, wg, in_d, nullptr, 1)))
            << row->key;
        ++checked;
      }
    EXPECT_GE(checked, 20) << name;
  }
  const Grid nan_input = test::random_grid(100, 37, 43, NAN, NAN);
  const Outcome o = test::run_through_runner(
      *env, one_app("gaussian5"), parse_variants("accurate,rows:2", "nn"), wgs, nan_input, nullptr,
      1, KPERF_TEST_KERNEL_ROOT, false, {}, "-DKPERF_PROBE_NO_LOADS=1");
  ASSERT_EQ(o.outputs.size(), 2 * wgs.size());
  for (const auto& [key, out] : o.outputs)
    for (const float x : out.data) ASSERT_TRUE(std::isfinite(x)) << key;
}

// The experimental pipelined tile (-DKPERF_PIPELINE_BLOCKS): a group computes three blocks down
// a column (the last group fewer) and gives the model's outputs; shapes it does not support
// (rows:3 with two rows per work-item) are build failures, not wrong outputs.
TEST(Pipeline, BlocksDownAColumnMatchTheModel) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{8, 2, 4, 6}, {4, 2, 4, 2}};
  const auto variants = parse_variants("accurate,rows:2,rows:3", "nn,li");
  const Grid in = test::random_grid(100, 37, 47);
  const GridD in_d = to_double(in.data, in.width, in.height);
  for (const char* name : {"gaussian5", "sobel5", "median"}) {
    const AppDescriptor& app = find_app(name);
    const Outcome o =
        test::run_through_runner(*env, {&app}, variants, wgs, in, nullptr, 1,
                                 KPERF_TEST_KERNEL_ROOT, false, {}, "-DKPERF_PIPELINE_BLOCKS=3");
    for (const auto& v : variants)
      for (const auto& wg : wgs) {
        const ResultRow* row = o.find(name, v, wg);
        ASSERT_NE(row, nullptr);
        if (v.skip == 3 && wg.py == 2) {
          EXPECT_EQ(row->status, Status::kBuildFailed) << row->key;
          continue;
        }
        ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
        EXPECT_TRUE(
            test::within_tolerance(o.outputs.at(row->key), model_run(app, v, wg, in_d, nullptr, 1)))
            << row->key;
      }
  }
}

// Elements a scheme skips, poisoned with NaN, must not change the outputs: they were never loaded.
class Poison : public ::testing::TestWithParam<std::string> {};

TEST_P(Poison, SkippedElementsAreNeverLoaded) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 2);
  const int w = 96, h = 40;
  Grid in = test::random_grid(w, h, 41);
  std::optional<Grid> power;
  if (app.traits.iterated) {
    HotspotInput chip = make_synthetic_chip(w, h);
    in = chip.temp;
    power = chip.power;
  }
  const auto variants = parse_variants("stencil,rows:2,rows:3,cols:2,cols:4", "nn,li");
  for (const WorkGroup wg : {WorkGroup{8, 8, 1, 1}, WorkGroup{4, 8, 4, 1}, WorkGroup{4, 4, 4, 2}}) {
    const Outcome clean =
        test::run_through_runner(*env, {&app}, variants, {wg}, in, power ? &*power : nullptr, 1);
    const int gx = 2, gy = 2;  // an interior work-group
    const WorkGroup block = wg.block();
    for (const auto& v : variants) {
      if (check_variant(v, app.radius, wg)) continue;
      const bool whole = poisons_whole_grid(v);
      Grid poisoned = in;
      ASSERT_GT(poison_skipped(v, app.radius, wg, gx, gy, poisoned), 0u) << v.label();
      const Outcome dirty =
          test::run_through_runner(*env, {&app}, {v}, {wg}, poisoned, power ? &*power : nullptr, 1);
      const ResultRow* a = clean.find(app.name, v, wg);
      const ResultRow* b = dirty.find(app.name, v, wg);
      ASSERT_TRUE(a && b && a->ok() && b->ok()) << v.label();
      const Grid& ca = clean.outputs.at(a->key);
      const Grid& cb = dirty.outputs.at(b->key);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          if (!whole && (x / block.x != gx || y / block.y != gy)) continue;
          ASSERT_TRUE(std::isfinite(cb.at(y, x)))
              << v.label() << " vec " << wg.vec << " at " << y << "," << x;
          ASSERT_EQ(ca.at(y, x), cb.at(y, x))
              << v.label() << " vec " << wg.vec << " at " << y << "," << x;
        }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllApps, Poison, ::testing::ValuesIn(test::all_app_names()));

// Hotspot against the CPU transcription on Rodinia's own inputs, when present beside the tree.
TEST(Hotspot, MatchesReferenceOnRodiniaInputs) {
  KPERF_REQUIRE_DEVICE();
  const fs::path data = fs::path(KPERF_TEST_SHARED_DATA) / "rodinia-hotspot";
  if (!fs::exists(data / "temp_64.xz")) GTEST_SKIP() << "Rodinia inputs not found at " << data;
  TempDir dir;
  for (int n : {64, 512}) {
    for (const char* kind : {"temp", "power"}) {
      const std::string cmd =
          "xz -dc " + (data / (std::string(kind) + "_" + std::to_string(n) + ".xz")).string() +
          " > " + (dir / (std::string(kind) + std::to_string(n))).string();
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    const Grid temp = read_rodinia((dir / ("temp" + std::to_string(n))).string());
    const Grid power = read_rodinia((dir / ("power" + std::to_string(n))).string());
    ASSERT_EQ(temp.width, n);
    const AppDescriptor& app = find_app("hotspot");
    const Outcome o = test::run_through_runner(*env, {&app}, parse_variants("accurate", "nn"),
                                               {{16, 16}}, temp, &power, 60);
    expect_all_ok(o);
    const GridD pw = to_double(power.data, n, n);
    const GridD ref = reference_run(app, to_double(temp.data, n, n), &pw, 60);
    for (const auto& [key, out] : o.outputs) EXPECT_TRUE(test::within_tolerance(out, ref)) << key;
  }
}

// A copy of the kernel tree with one file replaced, to provoke failures.
fs::path kernel_tree_with(const TempDir& dir, const std::string& file, const std::string& source) {
  const fs::path root = dir / "tree";
  fs::create_directories(root);
  fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / "kernels", root / "kernels",
           fs::copy_options::recursive);
  fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / "schemes", root / "schemes",
           fs::copy_options::recursive);
  std::ofstream(root / "kernels" / file) << source;
  return root;
}

// The cache probe's mechanics on the test device (its knee is the unit test's, CacheProbe.*):
// every buffer from 1 MiB in steps of sqrt(2) timed, each a positive bandwidth, and either a
// cache found or the reason why not.
TEST(CacheProbe, TimesEveryFootprintOnTheDevice) {
  ClEnv* env = test::test_env();
  if (!env) GTEST_SKIP() << "no OpenCL device";
  const CacheProbe probe =
      probe_last_level_cache(*env, KPERF_TEST_KERNEL_ROOT, 16u << 20, 32u << 20);
  ASSERT_TRUE(probe.problem.empty() || probe.problem.rfind("no cache effect", 0) == 0)
      << probe.problem;
  ASSERT_EQ(probe.points.size(), 9u);  // 1, 1.4, 2, ..., 16 MiB
  for (std::size_t i = 0; i < probe.points.size(); ++i) {
    EXPECT_GT(probe.points[i].gbps, 0) << i;
    if (i) EXPECT_GT(probe.points[i].bytes, probe.points[i - 1].bytes);
  }
  EXPECT_NEAR(static_cast<double>(probe.points.back().bytes), 16.0 * (1 << 20), 1e5);
  EXPECT_EQ(probe.cache_bytes.has_value(), probe.problem.empty());
  EXPECT_EQ(probe.to_json()["points"].size(), probe.points.size());
}

// The compile workers ask whether a program is cached by binary_cache_path(); build() stores it
// under its options with the device's build_defines. The two must agree on a device whose defines
// are not empty (NVIDIA's -DKPERF_NV_SM), or every run recompiles everything in workers.
TEST(BinaryCache, PathOfAPairIsWhereBuildStoresItWhateverTheDeviceDefines) {
  ClEnv* shared = test::test_env();
  if (!shared) GTEST_SKIP() << "no OpenCL device";
  for (const DeviceEntry& e : enumerate_devices()) {
    if (e.info.name != shared->info().name || e.info.platform_name != shared->info().platform_name)
      continue;
    ClEnv env(e);
    env.set_nv_compute_capability_for_tests(90);
    ASSERT_EQ(env.info().build_defines(), " -DKPERF_NV_SM=90");
    TempDir dir;
    env.enable_binary_cache(dir.path().string(), "salt");
    const std::string source = "__kernel void k(__global float* x) { x[0] = KPERF_NV_SM; }";
    const std::string path = env.binary_cache_path(source, "-cl-std=CL1.2");
    ASSERT_FALSE(path.empty());
    EXPECT_FALSE(std::filesystem::exists(path));
    env.build(source, "-cl-std=CL1.2");
    EXPECT_EQ(env.binary_cache_stores(), 1u);
    EXPECT_TRUE(std::filesystem::exists(path)) << "build() stored the program elsewhere";
    return;
  }
  FAIL() << "the test device is not among enumerate_devices()";
}

// context.builds: the ledger holds each program with the options the compiler got, the device's
// defines (NVIDIA's -DKPERF_NV_SM, faked here) included, so that builds_sha256 changes with them.
TEST(Provenance, LedgerRecordsTheOptionsWithTheDeviceDefines) {
  ClEnv* shared = test::test_env();
  if (!shared) GTEST_SKIP() << "no OpenCL device";
  for (const DeviceEntry& e : enumerate_devices()) {
    if (e.info.name != shared->info().name || e.info.platform_name != shared->info().platform_name)
      continue;
    ClEnv env(e);
    env.set_nv_compute_capability_for_tests(90);
    const std::string source =
        "// the ledger's test\n__kernel void k(__global float* x) { x[0] = KPERF_NV_SM; }";
    env.build(source, "-cl-std=CL1.2 -DKPERF_LEDGER_TEST=1");
    std::vector<std::string> options;
    for (const ProgramSources& p : recorded_program_sources())
      if (p.source_sha256 == sha256_hex(source)) options.push_back(p.options);
    EXPECT_EQ(options,
              std::vector<std::string>{"-cl-std=CL1.2 -DKPERF_LEDGER_TEST=1 -DKPERF_NV_SM=90"});
    return;
  }
  FAIL() << "the test device is not among enumerate_devices()";
}

TEST(Failures, OutOfBoundsWriteTripsTheCanary) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path root = kernel_tree_with(dir, "gaussian3.cl", R"(
#define RADIUS 1
#include "kperf_tile.cl"
__kernel void kperf_app(__global const float* in, __global float* out, int width, int height) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x < width && y < height) out[y * width + x] = in[y * width + x];
  if (x == 0 && y == 0) out[width * height + 3] = 1.0f;  // past the end
}
)");
  const Outcome o =
      test::run_through_runner(*env, one_app("gaussian3"), parse_variants("accurate", "nn"),
                               {{8, 8}}, test::random_grid(16, 16, 5), nullptr, 1, root.string());
  ASSERT_EQ(o.rows.size(), 1u);
  EXPECT_EQ(o.rows[0].status, Status::kRunFailed);
  EXPECT_NE(o.rows[0].reason.find("canary"), std::string::npos) << o.rows[0].reason;
}

TEST(Failures, SyntaxErrorIsABuildFailedRowAndTheSweepGoesOn) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path root =
      kernel_tree_with(dir, "sobel3.cl", "#include \"kperf_tile.cl\"\nthis is not OpenCL C;\n");
  const Outcome o = test::run_through_runner(
      *env, {&find_app("sobel3"), &find_app("gaussian3")}, parse_variants("accurate", "nn"),
      {{8, 8}}, test::random_grid(16, 16, 5), nullptr, 1, root.string());
  ASSERT_EQ(o.rows.size(), 2u);
  const ResultRow* sobel = o.find("sobel3", parse_scheme("accurate"), {8, 8});
  const ResultRow* gauss = o.find("gaussian3", parse_scheme("accurate"), {8, 8});
  ASSERT_TRUE(sobel && gauss);
  EXPECT_EQ(sobel->status, Status::kBuildFailed);
  EXPECT_NE(sobel->reason.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << sobel->reason;
  EXPECT_FALSE(sobel->build_log.empty());
  EXPECT_EQ(gauss->status, Status::kOk);
}

TEST(Validation, RejectedWorkGroupsAreRowsWithReasons) {
  KPERF_REQUIRE_DEVICE();
  const std::size_t too_big = env->info().max_work_group_size * 2;
  const Outcome o = test::run_through_runner(*env, {&find_app("gaussian3"), &find_app("inversion")},
                                             parse_variants("stencil,rows:4", "nn"),
                                             {{static_cast<int>(too_big), 1}, {16, 1}, {16, 4}},
                                             test::random_grid(20, 20, 9));
  std::map<std::string, std::string> status;
  for (const auto& r : o.rows)
    status[r.key.substr(0, r.key.find("/input"))] =
        std::string(status_name(r.status)) + ": " + r.reason;
  const std::string big = "wg:" + std::to_string(too_big) + "x1";
  EXPECT_EQ(status["gaussian3/stencil/nn/" + big].rfind("invalid_config: work-group", 0), 0u)
      << status["gaussian3/stencil/nn/" + big];
  EXPECT_EQ(status["gaussian3/rows:4/nn/wg:16x1"].rfind("invalid_config: tile height 3", 0), 0u);
  EXPECT_EQ(status["inversion/stencil/nn/wg:16x4"].rfind("not_applicable", 0), 0u);
  EXPECT_EQ(status["gaussian3/rows:4/nn/wg:16x4"].rfind("ok", 0), 0u)
      << status["gaussian3/rows:4/nn/wg:16x4"];
  EXPECT_EQ(o.rows.size(), 2u * 2u * 3u);
}

// The device's metrics against the host's on outputs with NaN, infinities, exact elements and a
// non-finite truth element, stored as float, half and bfloat16, on grids larger and smaller than
// SSIM's window: the same counts, the same values up to summation order.
TEST(DeviceMetrics, AgreeWithTheHostIncludingNonFiniteAndHalfOutputs) {
  KPERF_REQUIRE_DEVICE();
  if (auto why = DeviceMetrics::unsupported(env->device())) GTEST_SKIP() << *why;
  DeviceMetrics metrics(*env, KPERF_TEST_KERNEL_ROOT);
  for (auto [w, h] : {std::pair<int, int>{70, 53}, {9, 7}}) {
    const Grid base = test::random_grid(w, h, 21), noise = test::random_grid(w, h, 22, -3, 3);
    std::vector<double> truth(base.data.begin(), base.data.end());
    truth[5] = std::numeric_limits<double>::quiet_NaN();
    std::vector<float> approx(truth.size());
    for (std::size_t i = 0; i < approx.size(); ++i)
      approx[i] = i % 7 == 0 ? static_cast<float>(truth[i]) : base.data[i] + noise.data[i];
    approx[11] = std::numeric_limits<float>::quiet_NaN();
    approx[12] = std::numeric_limits<float>::infinity();
    approx[13] = 1e-30f;
    ASSERT_TRUE(metrics.set_truth(truth, w, h));
    for (const StorageType& type : storage_types()) {
      // The output as stored, and the floats it holds.
      std::vector<unsigned char> bytes(approx.size() * type.bytes);
      type.encode(approx.data(), bytes.data(), approx.size());
      std::vector<float> stored(approx.size());
      type.decode(bytes.data(), stored.data(), stored.size());
      cl::Buffer buffer(env->context(), CL_MEM_READ_ONLY, bytes.size());
      env->queue().enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
      const ErrorMetrics d = metrics.compute(buffer, type, true);
      const ErrorMetrics e = compute_errors(truth, stored, w, h, true);
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + type.name);
      EXPECT_EQ(d.nonfinite, e.nonfinite);
      EXPECT_EQ(d.nonfinite, 3);
      EXPECT_EQ(d.mre_excluded, e.mre_excluded);
      EXPECT_GT(e.wrong_fraction, 0.5);
      for (auto [name, a, b] : {std::tuple<const char*, double, double>{"mre", d.mre, e.mre},
                                {"me", d.me, e.me},
                                {"mae", d.mae, e.mae},
                                {"psnr_db", d.psnr_db, e.psnr_db},
                                {"max_abs", d.max_abs, e.max_abs},
                                {"wrong_fraction", d.wrong_fraction, e.wrong_fraction},
                                {"ssim", d.ssim, e.ssim}})
        EXPECT_NEAR(a, b, 1e-10 * std::max(1.0, std::fabs(b))) << name;
    }
  }
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

// The fp64 truth of a built-in image app (its own accurate kernel with every float in double)
// agrees with its C++ reference: the truth user apps are measured against is trustworthy.
TEST(UserApp, Fp64TruthOfBuiltinsMatchesTheirCppReferences) {
  KPERF_REQUIRE_DEVICE();
  if (!has_fp64(env->device())) GTEST_SKIP() << "the device has no cl_khr_fp64";
  const int w = 37, h = 29;  // not a multiple of the truth kernel's 8x8 work-groups
  const GridD in = to_double(test::random_grid(w, h, 7).data, w, h);
  for (const AppDescriptor& app : app_registry()) {
    if (!app.takes_images()) continue;  // hotspot's extra inputs stay with its C++ reference
    AppTruth truth(*env, app, KPERF_TEST_KERNEL_ROOT);
    EXPECT_STREQ(truth.kind(), "fp64-kernel");
    const GridD got = truth.run(in);
    const GridD ref = reference_run(app, in, nullptr, 1);
    double scale = 0, worst = 0;
    for (double v : ref.data) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < ref.data.size(); ++i)
      worst = std::max(worst, std::fabs(got.data[i] - ref.data[i]));
    EXPECT_LE(worst, 1e-9 * scale) << app.name << ": max difference " << worst;
  }
}

// An app the suite has never seen (written here, asymmetric weights and a nonlinearity, radius
// 2) runs through every axis from one .cl file, each output equal to the tile model of its
// configuration, the model evaluated by the app's own fp64 truth kernel.
TEST(UserApp, UnseenKernelTakesEveryAxisAndMatchesItsModel) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path file = dir / "skewed.cl";
  std::ofstream(file) << R"(// skewed: an asymmetric cross with a clamp (a test app).
// @name skewed
// @radius 2
#define RADIUS 2
#include "kperf_tile.cl"
inline float skewed_point(const float* c) {
  const float s = 0.5f * KPERF_AT(c, 0, 0) + 0.25f * KPERF_AT(c, -2, 1) + 0.125f * KPERF_AT(c, 1, -2)
                + 0.0625f * KPERF_AT(c, 2, 2) + 0.0625f * KPERF_AT(c, -1, -1);
  return fmin(s, (float)200) + 0.01f * KPERF_AT(c, 0, 2) * KPERF_AT(c, 0, -1);
}
KPERF_IMAGE_KERNEL(skewed_point)
)";
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = add_user_app(file.string());
  const int w = 45, h = 38;
  const Grid in = test::random_grid(w, h, 23);
  const GridD in_d = to_double(in.data, w, h);
  AppTruth truth(*env, app, KPERF_TEST_KERNEL_ROOT);
  const GridEvaluator evaluate = [&](const GridD& tiles) { return truth.run(tiles); };
  std::vector<AxesSpec> specs(4);
  specs[0].schemes = "all", specs[0].recons = "nn,li", specs[0].loads = "local,global,image";
  specs[1].schemes = "accurate,rows:2", specs[1].outputs = "rows:2,center:3";
  specs[1].output_recons = "nn,li", specs[1].output_fills = "fused,separate";
  specs[2].schemes = "accurate,rows:2,cols:3", specs[2].precisions = "f16in,f16,bf16";
  specs[2].perforates = "device,host";
  specs[3].schemes = "stencil,rows:2", specs[3].kernel["relax"] = "skip";
  // The fast tier: the wide shape alone (vec 4, py 2).
  const std::vector<WorkGroup> wgs = test::full_matrix()
                                         ? std::vector<WorkGroup>{{8, 8, 1, 1}, {4, 4, 4, 2}}
                                         : std::vector<WorkGroup>{{4, 4, 4, 2}};
  std::size_t checked = 0;
  for (const AxesSpec& spec : specs) {
    const auto variants = parse_variants(spec);
    const Outcome o = test::run_through_runner(*env, {&app}, variants, wgs, in);
    for (const Variant& v : variants)
      for (const WorkGroup wg : wgs) {
        const ResultRow* row = o.find(app.name, v, wg);
        ASSERT_TRUE(row) << v.label();
        if (row->status == Status::kNotApplicable) continue;
        ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
        EXPECT_EQ(row->reference, "fp64-kernel");
        if (races(v)) {  // a race by design: its rows keep the error of several launches
          EXPECT_EQ(row->error_reps.size(), 5u) << row->key;
          continue;
        }
        const GridD model = model_run(app, v, wg, in_d, nullptr, 1, {}, evaluate);
        EXPECT_TRUE(test::within_tolerance(o.outputs.at(row->key), model, v.precision_info().out))
            << row->key;
        ++checked;
      }
  }
  EXPECT_GE(checked, 30u * wgs.size());
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
}

// A kernel that compiles in float but not with float as double (fmin(double, float) has no
// overload) is measured against its float accurate kernel, and its rows say so.
TEST(UserApp, KernelWithoutAnFp64BuildFallsBackToItsFloatTruth) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path file = dir / "clamped.cl";
  std::ofstream(file)
      << "// @name clamped\n// @radius 1\n#define RADIUS 1\n"
         "#include \"kperf_tile.cl\"\ninline float clamped_point(const float* c) "
         "{ return fmin(KPERF_AT(c, 0, 1), 100.0f); }\nKPERF_IMAGE_KERNEL(clamped_point)\n";
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = add_user_app(file.string());
  const Outcome o = test::run_through_runner(*env, {&app}, parse_variants("accurate", "nn"),
                                             {{8, 8, 1, 1}}, test::random_grid(32, 32, 3));
  ASSERT_EQ(o.rows.size(), 1u);
  EXPECT_EQ(o.rows[0].status, Status::kOk) << o.rows[0].reason << o.rows[0].build_log;
  EXPECT_EQ(o.rows[0].reference, "device-accurate");
  ASSERT_TRUE(o.rows[0].error);
  EXPECT_EQ(o.rows[0].error->max_abs, 0.0);  // the accurate kernel is its own truth
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
}

// A user kernel that does not compile is build_failed rows with the log, not an error of the run.
TEST(UserApp, KernelThatDoesNotCompileIsBuildFailedRows) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path file = dir / "broken.cl";
  std::ofstream(file) << "// @name broken\n// @radius 1\n#define RADIUS 1\n"
                         "#include \"kperf_tile.cl\"\ninline float broken_point(const float* c) "
                         "{ return undeclared_name; }\nKPERF_IMAGE_KERNEL(broken_point)\n";
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = add_user_app(file.string());
  const Outcome o = test::run_through_runner(*env, {&app}, parse_variants("accurate,rows:2", "nn"),
                                             {{8, 8, 1, 1}}, test::random_grid(32, 32, 3));
  ASSERT_EQ(o.rows.size(), 2u);
  for (const ResultRow& r : o.rows) {
    EXPECT_EQ(r.status, Status::kBuildFailed) << r.key;
    EXPECT_NE(r.build_log.find("undeclared_name"), std::string::npos) << r.build_log;
  }
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
}

// A kernel that builds with the compiler's messages (here a #warning) keeps them on its ok rows,
// as the rows of one that does not build keep its log, and another app's build does not carry
// them. (Its log need not be empty: NVIDIA's 580 driver notes on every kernel that it overrides
// a noinline attribute.)
TEST(UserApp, CompilerMessagesOfABuildThatSucceededAreOnItsRows) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path file = dir / "noisy.cl";
  std::ofstream(file) << "// @name noisy\n// @radius 1\n#define RADIUS 1\n"
                         "#include \"kperf_tile.cl\"\n#warning kperf_noisy_message\n"
                         "inline float noisy_point(const float* c) "
                         "{ return KPERF_AT(c, 0, 1); }\nKPERF_IMAGE_KERNEL(noisy_point)\n";
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& app = add_user_app(file.string());
  const Outcome noisy = test::run_through_runner(*env, {&app}, parse_variants("accurate", "nn"),
                                                 {{8, 8, 1, 1}}, test::random_grid(32, 32, 3));
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  ASSERT_EQ(noisy.rows.size(), 1u);
  EXPECT_EQ(noisy.rows[0].status, Status::kOk) << noisy.rows[0].reason << noisy.rows[0].build_log;
  EXPECT_NE(noisy.rows[0].build_log.find("kperf_noisy_message"), std::string::npos)
      << noisy.rows[0].build_log;
  const Outcome silent =
      test::run_through_runner(*env, {&find_app("gaussian3")}, parse_variants("accurate", "nn"),
                               {{8, 8, 1, 1}}, test::random_grid(32, 32, 3));
  ASSERT_EQ(silent.rows.size(), 1u);
  EXPECT_EQ(silent.rows[0].status, Status::kOk) << silent.rows[0].reason;
  EXPECT_EQ(silent.rows[0].build_log.find("kperf_noisy_message"), std::string::npos)
      << silent.rows[0].build_log;
  if (env->info().vendor.find("NVIDIA") == std::string::npos)
    EXPECT_EQ(silent.rows[0].build_log, "");  // PoCL and Oclgrind say nothing of a clean build
}

// Every row whose kernel was created says what the driver reports of it: the local load path's
// tile is local memory the global path does not have, and the launch shape fits its largest
// work-group.
TEST(Runner, RowsCarryWhatTheDriverReportsOfTheirKernel) {
  KPERF_REQUIRE_DEVICE();
  AxesSpec spec;
  spec.schemes = "accurate";
  spec.loads = "local,global";
  const Outcome o = test::run_through_runner(*env, {&find_app("gaussian3")}, parse_variants(spec),
                                             {{8, 8, 1, 1}}, test::random_grid(32, 32, 3));
  ASSERT_EQ(o.rows.size(), 2u);
  const ResultRow* local = nullptr;
  const ResultRow* global = nullptr;
  for (const ResultRow& r : o.rows) {
    ASSERT_EQ(r.status, Status::kOk) << r.key << ": " << r.reason;
    ASSERT_TRUE(r.kernel_info) << r.key;
    EXPECT_GE(r.kernel_info->max_work_group_size, 64u) << r.key;
    (r.load == "local" ? local : global) = &r;
  }
  ASSERT_TRUE(local && global);
  // A 10 x 10 float tile (8 x 8 outputs and a radius of 1) at least.
  EXPECT_GE(local->kernel_info->local_mem_bytes, 400u);
  EXPECT_LT(global->kernel_info->local_mem_bytes, local->kernel_info->local_mem_bytes);
}

}  // namespace
}  // namespace kperf
