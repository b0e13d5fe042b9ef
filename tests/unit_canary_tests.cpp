// Host unit tests of the per-input canary (SPEC 15): the model of sampled work-groups against the
// whole-grid model, the sample and its quantiles, and estimates against the errors they estimate.
// No OpenCL device needed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "apps.hpp"
#include "bound_input.hpp"
#include "fused_model.hpp"
#include "input_canary.hpp"
#include "metrics.hpp"
#include "schemes.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

// Every input scheme of the registry (with skip factors 2 and 3), every output scheme family and
// storage type, and bilateral's loop perforation.
std::vector<Variant> model_variants() {
  AxesSpec axes;
  axes.schemes.clear();
  for (const SchemeDescriptor& s : scheme_registry())
    for (const char* k : {":2", ":3"}) {
      if (!axes.schemes.empty()) axes.schemes += ",";
      axes.schemes += std::string(s.family) + (s.takes_skip ? k : "");
      if (!s.takes_skip) break;
    }
  axes.recons = "nn,li";
  axes.outputs = "none,rows:2,cols:3,center:2";
  axes.output_recons = "nn,li";
  axes.precisions = "f32,f16,bf16";
  axes.kernel["loop-skip"] = "1,2";
  return parse_variants(axes);
}

// The model of some groups is the whole-grid model there, for every variant and launch shape
// (odd grid sizes: partial blocks at both far edges, output periods cut short).
TEST(CanaryModel, SampledGroupsEqualTheWholeGridModel) {
  const Grid in = test::random_grid(45, 37, 11);
  const GridD in_d = to_double(in.data, in.width, in.height);
  const ModelInput read{45, 37, nullptr,
                        [&in](int y, int x) { return static_cast<double>(in.at(y, x)); }};
  int compared = 0;
  for (const char* name : {"gaussian5", "bilateral", "sobel3"}) {
    const AppDescriptor& app = find_app(name);
    for (const Variant& v : model_variants()) {
      if (check_variant(v, app, {8, 4})) continue;
      for (const WorkGroup wg : {WorkGroup{8, 4, 1, 1}, WorkGroup{4, 4, 2, 3}}) {
        if (check_variant(v, app, wg)) continue;
        const GridD whole = model_run(app, v, wg, in_d, nullptr, 1);
        const WorkGroup b = block_of(v, wg);
        const int gx_n = (45 + b.x - 1) / b.x, gy_n = (37 + b.y - 1) / b.y;
        // Corners, an interior group and the far edges.
        const std::vector<std::pair<int, int>> groups = {
            {0, 0}, {gy_n - 1, gx_n - 1}, {gy_n / 2, gx_n / 2}, {0, gx_n - 1}, {gy_n - 1, 0}};
        std::set<std::pair<int, int>> once(groups.begin(), groups.end());
        const GroupOutputs part = model_groups(app, v, wg, read, {once.begin(), once.end()});
        ASSERT_EQ(part.blocks.size(), once.size()) << v.id();
        for (const auto& [gy, gx] : once)
          for (int y = gy * b.y; y < std::min(37, (gy + 1) * b.y); ++y)
            for (int x = gx * b.x; x < std::min(45, (gx + 1) * b.x); ++x)
              ASSERT_EQ(part.at(y, x), whole.at(y, x)) << name << " " << v.id() << " wg " << wg.x
                                                       << "x" << wg.y << " at " << y << "," << x;
        // Windows of the blocks alone: the same outputs there.
        const std::vector<std::pair<int, int>> list(once.begin(), once.end());
        std::vector<BlockRect> windows;
        for (std::size_t i = 0; i < list.size(); ++i) {
          const int y0 = static_cast<int>(i) % b.y, x0 = static_cast<int>(3 * i) % b.x;
          windows.push_back({y0, std::min(b.y, y0 + 3), x0, std::min(b.x, x0 + 5)});
        }
        const GroupOutputs windowed =
            model_groups(app, v, wg, {45, 37, in.data.data(), {}}, list, {}, {}, windows);
        for (std::size_t i = 0; i < list.size(); ++i)
          for (int ly = windows[i].y0; ly < windows[i].y1; ++ly)
            for (int lx = windows[i].x0; lx < windows[i].x1; ++lx) {
              const int y = list[i].first * b.y + ly, x = list[i].second * b.x + lx;
              if (y < 37 && x < 45)
                ASSERT_EQ(windowed.at(y, x), whole.at(y, x)) << name << " " << v.id() << " window";
            }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 300);
}

TEST(CanaryModel, GroupsOfAnIteratedAppAreRefused) {
  const AppDescriptor& hotspot = find_app("hotspot");
  const ModelInput read{16, 16, nullptr, [](int, int) { return 1.0; }};
  EXPECT_THROW(model_groups(hotspot, parse_scheme("accurate"), {8, 8}, read, {{0, 0}}),
               std::logic_error);
  EXPECT_TRUE(canary_problem({&hotspot, parse_scheme("accurate"), {8, 8}}).has_value());
  Variant relaxed = parse_scheme("accurate");
  relaxed.kernel_values.assign(1, 1);  // relax: skip, which races
  EXPECT_TRUE(canary_problem({&find_app("gaussian3"), relaxed, {8, 8}}).has_value());
  EXPECT_FALSE(canary_problem({&find_app("gaussian3"), parse_scheme("rows:2"), {8, 8}}));
}

TEST(CanarySample, StratifiedGroupsCoverTheGridOnceEach) {
  const auto groups = canary_groups(100, 40, 64, 7);
  std::set<std::pair<int, int>> distinct(groups.begin(), groups.end());
  EXPECT_EQ(distinct.size(), groups.size());
  EXPECT_GE(groups.size(), 64u);
  EXPECT_LE(groups.size(), 80u);
  int top = 0, left = 0;
  for (const auto& [gy, gx] : groups) {
    ASSERT_TRUE(gy >= 0 && gy < 40 && gx >= 0 && gx < 100);
    top += gy < 20, left += gx < 50;
  }
  // One per cell of a lattice: each half of the grid holds half the sample.
  EXPECT_NEAR(top, static_cast<int>(groups.size()) / 2, 4);
  EXPECT_NEAR(left, static_cast<int>(groups.size()) / 2, 4);
  EXPECT_EQ(canary_groups(100, 40, 64, 7), groups);  // seeded: the same every run
  EXPECT_NE(canary_groups(100, 40, 64, 8), groups);
  EXPECT_EQ(canary_groups(5, 4, 64, 7).size(), 20u);  // every group of a small grid
  // Windows of 16 x 8 outputs: a fraction of the outputs, at least min_tiles, one per group.
  CanarySettings s;
  s.fraction = 0.01;
  s.min_tiles = 32;
  const CanarySample big = canary_sample(2048, 2048, {128, 48, 1, 1}, s, 3);
  EXPECT_NEAR(static_cast<double>(big.groups.size()), 0.01 * 2048 * 2048 / 128, 60);
  EXPECT_DOUBLE_EQ(big.population, 16.0 * 43 * 8 * 6);
  for (const BlockRect& r : big.windows)
    ASSERT_TRUE(r.y1 - r.y0 == 8 && r.x1 - r.x0 == 16 && r.y0 >= 0 && r.y1 <= 48 && r.x0 >= 0 &&
                r.x1 <= 128);
  EXPECT_GE(canary_sample(256, 256, {16, 8, 1, 1}, s, 3).groups.size(), 32u);
  const CanarySample all = canary_sample(40, 24, {16, 8, 1, 1}, s, 3);
  EXPECT_EQ(all.groups.size(), 9u);  // every group of a small grid
  EXPECT_DOUBLE_EQ(all.population, 9);
}

TEST(CanarySample, Quantiles) {
  EXPECT_NEAR(normal_quantile(0.95), 1.6448536, 1e-6);
  EXPECT_NEAR(normal_quantile(0.001), -3.0902323, 1e-6);
  // Student's t from tables.
  EXPECT_NEAR(student_t_quantile(0.95, 1), 6.3138, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 2), 2.9200, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.0150, 2e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 30), 1.6973, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.99, 10), 2.7638, 3e-3);
}

// The estimate is the ratio of the sampled sums; its margin a t bound on the ratio's standard
// error, zero once every tile is in the sample; ME over the sampled truth's range.
TEST(CanarySample, EstimateFromTileSums) {
  std::vector<ErrorSums> tiles(4);
  const double rel[] = {1, 2, 3, 6}, n[] = {10, 10, 10, 10};
  for (int i = 0; i < 4; ++i) {
    tiles[i].rel = rel[i], tiles[i].n_rel = static_cast<std::int64_t>(n[i]);
    tiles[i].abs = 2 * rel[i], tiles[i].n = static_cast<std::int64_t>(n[i]);
    tiles[i].min_t = i, tiles[i].max_t = 10 + i;
  }
  const CanaryEstimate all = estimate_from_tiles(Metric::kMre, tiles, 4, 0.95);
  EXPECT_DOUBLE_EQ(all.estimate, 12.0 / 40);
  EXPECT_EQ(all.margin, 0);
  const CanaryEstimate some = estimate_from_tiles(Metric::kMre, tiles, 400, 0.95);
  // Per-tile means 0.1 0.2 0.3 0.6 about the ratio 0.3: sd 0.2160 (finite-population factor 0.99).
  const double sd = std::sqrt((0.2 * 0.2 + 0.1 * 0.1 + 0 + 0.3 * 0.3) / 3);
  EXPECT_NEAR(some.margin, student_t_quantile(0.95, 3) * std::sqrt(0.99) * sd / 2, 1e-12);
  const CanaryEstimate me = estimate_from_tiles(Metric::kMe, tiles, 400, 0.95);
  EXPECT_NEAR(me.estimate, 24.0 / 40 / 13, 1e-15);  // the range from 0 to 13
  EXPECT_NEAR(me.margin, 2 * some.margin / 13, 1e-12);
}

// A sample that carries no information bounds nothing: windows whose truths all lie under MRE's
// threshold, a single window with any, or for ME a sampled truth without range, get an unbounded
// margin (unless the sample is every window, where the estimate is the error itself).
TEST(CanarySample, UninformativeSamplesBoundNothing) {
  std::vector<ErrorSums> dark(4);
  for (ErrorSums& t : dark) t.n = 10, t.excluded = 10;  // every truth at 0: n_rel 0
  const CanaryEstimate mre = estimate_from_tiles(Metric::kMre, dark, 400, 0.95);
  EXPECT_EQ(mre.estimate, 0);
  EXPECT_TRUE(std::isinf(mre.margin) && mre.margin > 0);
  EXPECT_EQ(estimate_from_tiles(Metric::kMre, dark, 4, 0.95).margin, 0);  // the whole grid
  // One informative window: its own ratio is the estimate, and no spread is left to measure.
  std::vector<ErrorSums> one = dark;
  one[2].rel = 3, one[2].n_rel = 10, one[2].excluded = 0;
  const CanaryEstimate single = estimate_from_tiles(Metric::kMre, one, 400, 0.95);
  EXPECT_DOUBLE_EQ(single.estimate, 0.3);
  EXPECT_TRUE(std::isinf(single.margin));
  one[3] = one[2];
  EXPECT_TRUE(std::isfinite(estimate_from_tiles(Metric::kMre, one, 400, 0.95).margin));
  // ME of a constant sampled truth: the range it is normalised by is unknown.
  for (ErrorSums& t : dark) t.min_t = t.max_t = 0;
  EXPECT_TRUE(std::isinf(estimate_from_tiles(Metric::kMe, dark, 400, 0.95).margin));
  dark[1].max_t = 5;
  EXPECT_TRUE(std::isfinite(estimate_from_tiles(Metric::kMe, dark, 400, 0.95).margin));
}

// A dark input with one bright feature the sample misses: rows:2 errs far over the budget there,
// and a canary that saw only zeros must not pass it (it did, with estimate 0 and margin 0).
TEST(CanaryEstimate, ADarkSampleDoesNotPassABrightFeatureItMissed) {
  const int w = 256, h = 256;
  const AppDescriptor& app = find_app("gaussian3");
  Variant rows2 = parse_scheme("rows:2");
  rows2.recon = Recon::kNn;
  const WorkGroup wg{16, 8, 1, 1};
  const CanarySettings settings;  // 128 of the 512 blocks
  const std::uint64_t seed = 4;
  const CanarySample sample = canary_sample(w, h, block_of(rows2, wg), settings, seed);
  // Bright and dark rows alternating, 4 x 4, inside a block no window is in, 2 outputs from its
  // edges (radius 1): whichever rows rows:2 keeps, it rebuilds the others wrong.
  std::set<std::pair<int, int>> sampled(sample.groups.begin(), sample.groups.end());
  int fy = -1, fx = -1;
  for (int gy = 8; gy < 32 && fy < 0; ++gy)
    for (int gx = 4; gx < 16 && fy < 0; ++gx)
      if (!sampled.count({gy, gx})) fy = gy * 8 + 2, fx = gx * 16 + 6;
  ASSERT_GE(fy, 0);
  Grid in(w, h);
  for (int y = fy; y < fy + 4; y += 2)
    for (int x = fx; x < fx + 4; ++x) in.at(y, x) = 255;
  const GridD in_d = to_double(in.data, w, h);
  const GridD truth = reference_run(app, in_d, nullptr, 1);
  const GridD model = model_run(app, rows2, wg, in_d, nullptr, 1);
  const std::vector<float> approx(model.data.begin(), model.data.end());
  const double error = compute_errors(truth.data, approx, w, h, false).value(app.primary_metric);
  const double budget = 0.05;
  ASSERT_GT(error, budget);
  const CanaryEstimate e = InputCanary(in, settings, seed).estimate({{&app, rows2, wg}});
  EXPECT_EQ(e.estimate, 0);  // the sample saw the dark background only
  EXPECT_GT(e.upper(), budget) << "true error " << error;
  EXPECT_TRUE(std::isinf(e.margin));
}

// A 96x96 input, smooth but for a noisy quadrant; the canary of a chain of every group is the
// error of the chained models against the chained references exactly, and a sample of them
// bounds it.
TEST(CanaryEstimate, ChainsAndSamplesMatchTheWholeError) {
  Grid in(96, 96);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> noise(0, 255);
  for (int y = 0; y < 96; ++y)
    for (int x = 0; x < 96; ++x)
      in.at(y, x) = y < 48 && x < 48 ? noise(rng) : 100 + 50 * std::sin(0.1f * x + 0.07f * y);
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  Variant rows2 = parse_scheme("rows:2");
  rows2.recon = Recon::kLi;
  Variant out = parse_scheme("stencil");
  out.output = parse_output("rows:2");
  out.output_recon = Recon::kLi;
  out.precision = &find_precision("f16");
  const std::vector<PipelineStage> chain = {{&g5, rows2, {8, 4}}, {&s3, out, {4, 2, 1, 2}}};
  const std::vector<CanaryStage> stages = {{&g5, rows2, {8, 4}}, {&s3, out, {4, 2, 1, 2}}};
  const GridD truth = chain_truth({&g5, &s3}, in).back();
  const GridD model = chain_model(chain, in).back();
  std::vector<float> approx(model.data.begin(), model.data.end());
  const double whole = compute_errors(truth.data, approx, 96, 96, false).value(s3.primary_metric);
  CanarySettings every;
  every.fraction = 1;
  const CanaryEstimate exact = InputCanary(in, every, 1).estimate(stages);
  EXPECT_NEAR(exact.estimate, whole, 1e-9 * whole);
  EXPECT_EQ(exact.margin, 0);
  EXPECT_NEAR(exact.fraction, 1.0, 1e-12);
  CanarySettings some;
  some.fraction = 0.2;
  some.min_tiles = 8;
  int covered = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const CanaryEstimate e = InputCanary(in, some, seed).estimate(stages);
    EXPECT_LT(e.fraction, 0.3);
    covered += whole <= e.upper();
  }
  EXPECT_GE(covered, 17);  // a 95 % bound, 20 samples
}

}  // namespace
}  // namespace kperf
