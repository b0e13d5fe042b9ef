// Device tests of DeviceResidency (host/measure/device_residency.hpp) on the first OpenCL device:
// an input's uploads and a truth are made once and used again, least recently used entries that
// nothing holds are let go past the budget, and runners that share a residency measure what
// runners of their own measure, app for app and input for input.
#include <gtest/gtest.h>

#include <cmath>

#include "app_check.hpp"
#include "device_metrics.hpp"
#include "device_residency.hpp"
#include "io.hpp"
#include "runner.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

TEST(DeviceResidency, MakesEachInputAndTruthOnceAndLetsGoTheLeastRecentlyUsed) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<double> truth(64 * 64, 1.5);
  DeviceResidency kept(3 * truth.size() * sizeof(double));  // room for three truths
  auto a = kept.truth(*env, "a", truth, 64, 64);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->max_abs, 1.5);
  EXPECT_EQ(kept.truth(*env, "a", truth, 64, 64), a);  // the same upload
  auto a_uploads = kept.uploads("photo|64x64");
  EXPECT_EQ(kept.uploads("photo|64x64"), a_uploads);
  auto other_uploads = kept.uploads("other|64x64");
  EXPECT_NE(other_uploads, a_uploads);
  auto b = kept.truth(*env, "b", truth, 64, 64);
  b.reset();  // nothing holds b; a is still held
  kept.truth(*env, "c", truth, 64, 64);
  kept.truth(*env, "d", truth, 64, 64);  // four truths: one must go
  const auto counts = kept.to_json();
  EXPECT_EQ(counts["truths_uploaded"], 4);
  EXPECT_EQ(counts["truths_used_again"], 1);
  EXPECT_EQ(counts["inputs_bound_again"], 1);
  EXPECT_EQ(counts["let_go"], 1);
  EXPECT_EQ(kept.truth(*env, "a", truth, 64, 64), a);  // held: kept
  EXPECT_EQ(kept.to_json()["truths_uploaded"], 4);
  kept.truth(*env, "b", truth, 64, 64);  // b was the one let go: made again
  EXPECT_EQ(kept.to_json()["truths_uploaded"], 5);
}

// Two apps of different radii, three inputs (two of one name and size, their contents apart), a
// host-perforated scheme (its packed lines depend on the radius) and half storage, measured by a
// runner per pass as kperf tune's stages do: with one residency shared by the passes every row's
// errors equal those of passes that upload their own, and again with a budget so small that every
// input and truth is let go once no pass holds it.
TEST(DeviceResidency, SharedByRunnersMeasuresWhatTheirOwnUploadsMeasure) {
  KPERF_REQUIRE_DEVICE();
  if (DeviceMetrics::unsupported(env->device())) GTEST_SKIP() << "no device metrics here";
  TempDir dir;
  const Grid first = test::random_grid(48, 40, 7), second = test::random_grid(48, 40, 8);
  Grid edited = first;
  for (int x = 0; x < 48; ++x) edited.at(20, x) = 255.0f - edited.at(20, x);
  write_npy((dir.path() / "first.npy").string(), first);
  write_npy((dir.path() / "second.npy").string(), second);
  write_npy((dir.path() / "edited.npy").string(), edited);
  AxesSpec spec;
  spec.schemes = "accurate,rows2";
  spec.recons = "nn";
  spec.precisions = "f32,f16";
  spec.perforates = "device,host";
  RunConfig cfg;
  cfg.apps = {&find_app("gaussian3"), &find_app("gaussian5")};
  cfg.variants = parse_variants(spec);
  cfg.wgs = {{8, 8, 1, 1}};
  cfg.warmup = 0;
  cfg.reps = 1;
  cfg.kernel_root = KPERF_TEST_KERNEL_ROOT;
  cfg.input_warnings = false;
  cfg.metrics_on = "device";  // the truths on the device, as on a GPU
  cfg.image_inputs = {{"first", (dir.path() / "first.npy").string(), ""},
                      {"second", (dir.path() / "second.npy").string(), ""},
                      {"first", (dir.path() / "edited.npy").string(), ""}};
  // Each row's key and MRE in the order measured (two inputs share a name, so keys repeat).
  auto measure = [&](std::shared_ptr<DeviceResidency> residency) {
    std::vector<std::pair<std::string, double>> mre;
    RunConfig c = cfg;
    c.residency = residency;
    for (int pass = 0; pass < 2; ++pass) {
      Runner runner(*env, c);
      runner.run([&](ResultRow row) {
        if (row.status == Status::kNotApplicable) return;  // accurate under host perforation
        ASSERT_EQ(row.status, Status::kOk) << row.key << ": " << row.reason;
        ASSERT_TRUE(row.error) << row.key;
        mre.emplace_back(row.key, row.error->mre);
      });
    }
    return mre;
  };
  const auto own = measure(nullptr);
  ASSERT_GE(own.size(), 2u * 2u * 3u * 4u);
  auto roomy = std::make_shared<DeviceResidency>(std::size_t{1} << 30);
  auto tight = std::make_shared<DeviceResidency>(1);
  for (auto& residency : {roomy, tight}) {
    const auto shared = measure(residency);
    ASSERT_EQ(own.size(), shared.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
      EXPECT_EQ(shared[i].first, own[i].first);
      EXPECT_EQ(shared[i].second, own[i].second) << own[i].first << " (row " << i << ")";
    }
  }
  auto counts = roomy->to_json();
  EXPECT_EQ(counts["inputs_bound"], 3);  // three inputs, each once for both apps and passes
  EXPECT_EQ(counts["inputs_bound_again"], 2 * 2 * 3 - 3);
  EXPECT_EQ(counts["truths_uploaded"], 2 * 3);    // per app and input
  EXPECT_EQ(counts["truths_used_again"], 2 * 3);  // the second pass
  EXPECT_EQ(counts["let_go"], 0);
  counts = tight->to_json();
  EXPECT_GT(counts["let_go"], 0);
  EXPECT_GT(counts["inputs_bound"], 3);  // made again once let go
}

}  // namespace
}  // namespace kperf
