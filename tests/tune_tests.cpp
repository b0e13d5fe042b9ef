// The tuner's decision logic without a device: percentiles, the Pareto filter
// on ties and duplicates, --select canary's ladder rule and its walk over device estimates, the
// search space's atoms, variant identities and the proposed combinations; the split-conformal
// calibration of the canary's margin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

#include "canary_calibration.hpp"
#include "input_canary.hpp"
#include "select_walk.hpp"
#include "tune.hpp"

namespace kperf {
namespace {

TEST(Tune, PercentileInterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], 95) = 3.85, ([...], 50) = 2.5; order does
  // not matter.
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 95), 3.85);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({0.25}, 95), 0.25);
  // Ten training inputs, as the committed runs use: 0.95 * 9 = 8.55 between the
  // two largest.
  EXPECT_NEAR(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 20}, 95), 9 + 0.55 * 11, 1e-12);
  EXPECT_THROW(percentile({}, 95), std::invalid_argument);
}

// --select canary's ladder (SPEC 15): the static choice, then the front's usable points within
// twice the budget nearest it on a log scale, at most K, returned fastest first.
TEST(Tune, LadderRuleTakesTheFrontNearestTheBudget) {
  const std::vector<FrontPoint> points = {
      {1, 0.05},    // 0: front, 5x the budget: out of reach
      {2, 0.018},   // 1: front, within twice the budget
      {3, 0.009},   // 2: front, the nearest below
      {4, 0.004},   // 3: front
      {5, 0.0001},  // 4: front, far below
      {3.5, 0.02},  // 5: dominated by 2
      {6, 0.0},     // 6: exact (not usable)
  };
  std::vector<bool> usable(points.size(), true);
  usable[6] = false;
  // Distances |log(e / 0.01)|: 1 0.59, 2 0.11, 3 0.92, 4 4.6; K 3 keeps 2, 1, 3, fastest first.
  EXPECT_EQ(ladder_rule(points, usable, std::nullopt, 0.01, 2, 3),
            (std::vector<std::size_t>{1, 2, 3}));
  // The static choice comes first, on the front or not, and K bounds the rest.
  EXPECT_EQ(ladder_rule(points, usable, 5, 0.01, 2, 2), (std::vector<std::size_t>{2, 5}));
  EXPECT_EQ(ladder_rule(points, usable, 4, 0.01, 2, 1), (std::vector<std::size_t>{4}));
  // A static choice the canary cannot model is not a rung; K 0 keeps none.
  usable[2] = false;
  EXPECT_EQ(ladder_rule(points, usable, 2, 0.01, 2, 2), (std::vector<std::size_t>{1, 3}));
  EXPECT_TRUE(ladder_rule(points, usable, 1, 0.01, 2, 0).empty());
  // The reach: within 5.5 times the budget the 5 % point is near enough.
  usable[2] = true;
  EXPECT_EQ(ladder_rule(points, usable, std::nullopt, 0.01, 5.5, 4),
            (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(Tune, ParetoKeepsTheFirstOfDuplicatesAndDropsTies) {
  const std::vector<FrontPoint> points = {
      {1, 5},    // 0: front
      {2, 3},    // 1: front
      {2, 3},    // 2: duplicate of 1
      {3, 3},    // 3: slower, same error: dominated by 1
      {1, 5},    // 4: duplicate of 0
      {4, 1},    // 5: front
      {0.5, 9},  // 6: front (fastest)
      {2, 4},    // 7: same time as 1, worse error: dominated
      {1, 6},    // 8: same time as 0, worse error: dominated
  };
  EXPECT_EQ(pareto_indices(points), (std::vector<std::size_t>{6, 0, 1, 5}));
  EXPECT_TRUE(pareto_indices({}).empty());
  EXPECT_EQ(pareto_indices({{3, 3}}), (std::vector<std::size_t>{0}));
}

TEST(Tune, NearFrontKeepsWhatNoPointBeatsByMoreThanTheBand) {
  const std::vector<FrontPoint> points = {
      {100, 0.01},  // 0: front
      {102, 0.02},  // 1: 2 % slower than 0, more error: within a 3 % band
      {104, 0.02},  // 2: 4 % slower than 0, more error: beaten
      {90, 0.05},   // 3: front (fastest)
      {100, 0.01},  // 4: duplicate of 0, kept
      {99, 0.06},   // 5: slower than 3, more error: beaten by 3 at any band under 10 %
  };
  EXPECT_EQ(near_front_indices(points, 0.03), (std::vector<std::size_t>{0, 1, 3, 4}));
  EXPECT_EQ(near_front_indices(points, 0.0), (std::vector<std::size_t>{0, 3, 4}));
  EXPECT_EQ(near_front_indices(points, 0.2), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(near_front_indices({}, 0.03).empty());
}

TEST(Tune, ClimbBandReadsAFractionOrAll) {
  EXPECT_EQ(climb_band_from_text("0.25"), 0.25);
  EXPECT_EQ(climb_band_from_text("2"), 2.0);
  EXPECT_TRUE(std::isinf(climb_band_from_text("all")));
  for (const char *bad : {"0", "-1", "x", "", "inf", "nan", "0.2x"})
    EXPECT_THROW(climb_band_from_text(bad), std::invalid_argument) << bad;
}

AxesSpec small_space() {
  AxesSpec axes;
  axes.schemes = "accurate,stencil,rows:2,cols:3";
  axes.recons = "nn,li";
  axes.perforates = "device,host";
  axes.loads = "local,global";
  axes.outputs = "none,rows:2";
  axes.output_recons = "nn";
  axes.precisions = "f32,f16";
  axes.kernel["relax"] = "none,skip";
  return axes;
}

TEST(Tune, AtomsChangeOneGroupAndHostJoinsOnlyLinePerforation) {
  const TuneSpace space = make_space(small_space());
  std::set<std::string> inputs;
  for (const auto &v : space.values.at(AxisGroup::kInput)) inputs.insert(variant_id(v));
  EXPECT_EQ(inputs, (std::set<std::string>{"accurate/none", "stencil/nn", "rows:2/nn", "rows:2/li",
                                           "rows:2/nn/host", "rows:2/li/host", "cols:3/nn",
                                           "cols:3/li", "cols:3/nn/host", "cols:3/li/host"}));
  const std::vector<Variant> atoms = atoms_of(space);
  ASSERT_FALSE(atoms.empty());
  EXPECT_EQ(variant_id(atoms.front()), "accurate/none");
  std::set<std::string> ids;
  for (const auto &v : atoms) ids.insert(variant_id(v));
  EXPECT_EQ(ids.size(), atoms.size());
  // 1 default + 9 other inputs + global + out:rows:2 + f16 + relax:skip.
  EXPECT_EQ(atoms.size(), 14u);
  for (const char *id : {"accurate/none/load:global", "accurate/none/out:rows:2/nn/fused",
                         "accurate/none/f16", "accurate/none/relax:skip"})
    EXPECT_TRUE(ids.count(id)) << id;
  // A donor sets its own group and nothing else.
  const Variant rows_li = parse_variants(AxesSpec{"rows:2", "li"}).front();
  const Variant f16 = space.values.at(AxisGroup::kPrecision).back();
  EXPECT_EQ(variant_id(with_group(rows_li, AxisGroup::kPrecision, f16)), "rows:2/li/f16");
  EXPECT_EQ(variant_id(with_group(with_group(rows_li, AxisGroup::kPrecision, f16),
                                  AxisGroup::kInput, default_variant())),
            "accurate/none/f16");
  EXPECT_THROW(make_space(AxesSpec{"rows:2", "cubic"}), std::invalid_argument);
}

TEST(Tune, VariantIdentityReadsBackFromResultKeys) {
  for (const Variant &v : atoms_of(make_space(small_space()))) {
    ResultRow row;
    row.app = "gaussian3";
    row.key = make_key(row.app, v.canonical(), recon_name(v.recon), v.axes_key(), 32, 4, 4, 2,
                       "camera", 512, 512);
    row.variant = v.id();
    row.family = v.family();
    // Rows written with the field read it back; rows written before it derive it from the key.
    nlohmann::json written = to_json(row);
    EXPECT_EQ(variant_id(row_from_json(written)), variant_id(v)) << row.key;
    written.erase("variant");
    EXPECT_EQ(variant_id(row_from_json(written)), variant_id(v)) << row.key;
  }
}

TEST(Tune, FamiliesAndExactness) {
  const TuneSpace space = make_space(small_space());
  auto find = [&](const std::string &id) {
    for (const auto &v : atoms_of(space))
      if (variant_id(v) == id) return v;
    ADD_FAILURE() << id;
    return default_variant();
  };
  EXPECT_EQ(family_of(find("accurate/none")), "accurate");
  EXPECT_EQ(family_of(find("accurate/none/load:global")), "accurate");
  EXPECT_TRUE(is_exact(find("accurate/none/load:global")));
  EXPECT_EQ(family_of(find("rows:2/nn")), "input perforation");
  EXPECT_EQ(family_of(find("rows:2/nn/host")), "host perforation");
  EXPECT_EQ(family_of(find("accurate/none/out:rows:2/nn/fused")), "output approximation");
  EXPECT_EQ(family_of(find("accurate/none/f16")), "mixed precision");
  EXPECT_FALSE(is_exact(find("accurate/none/f16")));
  EXPECT_EQ(family_of(find("accurate/none/relax:skip")), "relaxed barrier");
  EXPECT_FALSE(is_exact(find("accurate/none/relax:skip")));
  EXPECT_EQ(family_of(with_group(find("rows:2/nn"), AxisGroup::kPrecision,
                                 space.values.at(AxisGroup::kPrecision).back())),
            "combination");
}

TEST(Tune, CombinationsCrossTheGroupFrontsWithinTheErrorBudget) {
  const TuneSpace space = make_space(small_space());
  const Variant base = default_variant();
  auto donor = [&](AxisGroup g, const std::string &id) {
    for (const auto &v : space.values.at(g))
      if (variant_id(with_group(base, g, v)) == id) return with_group(base, g, v);
    ADD_FAILURE() << id;
    return base;
  };
  const Variant a = donor(AxisGroup::kInput, "stencil/nn");
  const Variant b = donor(AxisGroup::kInput, "rows:2/nn");
  const Variant c = donor(AxisGroup::kInput, "cols:3/li");  // dominated by a
  const Variant p = donor(AxisGroup::kPrecision, "accurate/none/f16");
  const Variant o = donor(AxisGroup::kOutput, "accurate/none/out:rows:2/nn/fused");
  const std::vector<AtomStanding> atoms = {
      {AxisGroup::kInput, base, 100, 0},     {AxisGroup::kInput, a, 80, 0.01},
      {AxisGroup::kInput, b, 70, 0.03},      {AxisGroup::kInput, c, 90, 0.02},
      {AxisGroup::kPrecision, p, 90, 0.001}, {AxisGroup::kOutput, o, 60, 0.2},
  };
  const auto combos = propose_combinations(atoms, 100, 0.05, 10);
  // Fronts: input {a, b}, precision {p}, output {o}; o pushes every combination
  // past 0.05.
  ASSERT_EQ(combos.size(), 2u);
  EXPECT_EQ(variant_id(combos[0].variant), "rows:2/nn/f16");
  EXPECT_NEAR(combos[0].predicted_time, 100 * 0.7 * 0.9, 1e-9);
  EXPECT_NEAR(combos[0].predicted_error, 0.031, 1e-12);
  EXPECT_EQ(variant_id(combos[1].variant), "stencil/nn/f16");
  EXPECT_NEAR(combos[1].predicted_time, 100 * 0.8 * 0.9, 1e-9);
  // The limit keeps the fastest predicted; a larger budget admits the output
  // scheme.
  EXPECT_EQ(propose_combinations(atoms, 100, 0.05, 1).size(), 1u);
  const auto wide = propose_combinations(atoms, 100, 1.0, 100);
  std::set<std::string> ids;
  for (const auto &x : wide) ids.insert(variant_id(x.variant));
  EXPECT_EQ(ids, (std::set<std::string>{
                     "rows:2/nn/f16", "stencil/nn/f16", "rows:2/nn/out:rows:2/nn/fused",
                     "stencil/nn/out:rows:2/nn/fused", "accurate/none/out:rows:2/nn/fused/f16",
                     "rows:2/nn/out:rows:2/nn/fused/f16", "stencil/nn/out:rows:2/nn/fused/f16"}));
  for (const auto &x : wide) EXPECT_EQ(x.variant.scheme->family == std::string("cols"), false);
  EXPECT_TRUE(propose_combinations(atoms, 0, 1.0, 100).empty());
}

TEST(Tune, NeighbourShapesChangeOneOfWorkGroupVecAndPy) {
  std::vector<WorkGroup> shapes;
  for (const auto &[x, y] : std::vector<std::pair<int, int>>{{16, 8}, {32, 4}, {64, 4}})
    for (int vec : {1, 4})
      for (int py : {1, 4, 6}) shapes.push_back({x, y, vec, py});
  const WorkGroup at{32, 4, 4, 4};
  std::set<std::string> got;
  for (const auto &wg : neighbour_shapes(shapes, at))
    got.insert(wg_label(wg.x, wg.y, wg.vec, wg.py));
  // Two other work-groups, the other vec, the two other py: five, and never the shape itself.
  EXPECT_EQ(got, (std::set<std::string>{"16x8v4y4", "64x4v4y4", "32x4y4", "32x4v4", "32x4v4y6"}));
  // A list that is not a grid: only what it holds.
  EXPECT_TRUE(neighbour_shapes({at}, at).empty());
  EXPECT_EQ(neighbour_shapes({at, {16, 8, 1, 1}, {16, 8, 4, 4}}, at).size(), 1u);
}

TEST(Tune, StableChoiceTakesTheLowestErrorWithinTheTolerance) {
  // 100 and 102 tie at 3 %; 104 does not. The tie goes to the lower error.
  const std::vector<RankedCandidate> c = {{102, 0.01}, {100, 0.03}, {104, 0.0}};
  EXPECT_EQ(stable_choice(c, 0.03), std::optional<std::size_t>(0));
  // With no tolerance the fastest wins whatever its error.
  EXPECT_EQ(stable_choice(c, 0.0), std::optional<std::size_t>(1));
  // A tolerance wide enough for all: the exact one.
  EXPECT_EQ(stable_choice(c, 0.05), std::optional<std::size_t>(2));
  // Equal errors go to the faster; the answer does not depend on the order.
  EXPECT_EQ(stable_choice({{101, 0.02}, {100, 0.02}}, 0.03), std::optional<std::size_t>(1));
  EXPECT_EQ(stable_choice({{100, 0.02}, {101, 0.02}}, 0.03), std::optional<std::size_t>(0));
  EXPECT_EQ(stable_choice({}, 0.03), std::nullopt);
}

// A stage worker's time limit: ten minutes and one per configuration of its share, far beyond a
// share's measurement; KPERF_STAGE_TIMEOUT replaces it where it is a number above 0.
TEST(Tune, StageWorkerLimitGrowsWithItsShareUnlessTheEnvironmentSetsIt) {
  const char *set = std::getenv("KPERF_STAGE_TIMEOUT");
  const std::string saved = set ? set : "";
  ::unsetenv("KPERF_STAGE_TIMEOUT");
  EXPECT_EQ(stage_timeout_s(0), 600);
  EXPECT_EQ(stage_timeout_s(12), 600 + 12 * 60);
  ::setenv("KPERF_STAGE_TIMEOUT", "2.5", 1);
  EXPECT_EQ(stage_timeout_s(12), 2.5);
  for (const char *bad : {"0", "-1", "soon", ""}) {
    ::setenv("KPERF_STAGE_TIMEOUT", bad, 1);
    EXPECT_EQ(stage_timeout_s(1), 660) << bad;
  }
  if (set)
    ::setenv("KPERF_STAGE_TIMEOUT", saved.c_str(), 1);
  else
    ::unsetenv("KPERF_STAGE_TIMEOUT");
}

// A smooth textured 64 x 48 input in `grid`, and its canary's input (at least 8 tiles).
CanaryInput textured(Grid &grid) {
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) grid.at(y, x) = 100 + 50 * std::sin(0.3f * x + 0.2f * y);
  CanaryInput in;
  in.name = "textured";
  in.grid = &grid;
  in.settings.min_tiles = 8;
  return in;
}

// --select canary's walk over the device canary's estimates (select_walk.hpp): a rung the device
// estimated is read there and any other gets the host canary; canary_ns is the device call's
// interval plus the host's time outside it (the call's wall time beyond the interval, the walk),
// the host part never below 0 where the clocks disagree; a NaN estimate never passes; the select
// block says where each rung's canary ran.
TEST(Tune, WalkReadsTheDeviceEstimatesAndCountsTheirCost) {
  const AppDescriptor &app = find_app("gaussian3");
  Grid grid(64, 48);
  CanaryInput in = textured(grid);
  const CanaryStage a{&app, parse_scheme("rows:2"), {16, 8}},
      b{&app, parse_scheme("cols:2"), {16, 8}};
  const std::map<std::string, LadderRung> rungs = {
      {"a", {"a", {a}, false, false}},
      {"b", {"b", {b}, false, false}},
      {"acc", {"acc", {{&app, parse_scheme("accurate"), {16, 8}}}, true, false}}};
  RungMeasures here;
  here["a"].error = 0.02, here["a"].time = 100;
  here["b"].error = 0.01, here["b"].time = 200;
  here["acc"].error = 0, here["acc"].time = 400;
  const CanaryEstimate host_b = InputCanary(grid, in.settings, canary_seed(in.name)).estimate({b});
  const double budget = 0.5;
  ASSERT_LE(host_b.upper(), budget);
  auto walk = [&](const DeviceEstimates &d) {
    LadderWalks w({"a", "b", "acc"}, budget, "b");
    w.walk(in, rungs, here, &d);
    return w.json(nlohmann::ordered_json::object(), 95)["per_input"]["textured"];
  };
  DeviceEstimates d;
  d.by_label["a"] = {0.45, 0.1};  // above the budget: the host canary of b decides
  d.device_ns = 1000, d.wall_ns = 1500;
  auto pi = walk(d);
  EXPECT_EQ(pi["rung"], "b");
  EXPECT_EQ(pi["estimate"].get<double>(), host_b.estimate);
  EXPECT_EQ(pi["rungs_tried"], 2);
  EXPECT_EQ(pi["canary_device_ns"].get<double>(), 1000);
  EXPECT_GE(pi["canary_host_ns"].get<double>(), 500);
  EXPECT_EQ(pi["canary_ns"].get<double>(),
            pi["canary_device_ns"].get<double>() + pi["canary_host_ns"].get<double>());
  d.by_label["a"] = {0.3, 0.1};  // within: no host canary
  // Past the wall time (the two clocks disagree): the host adds the walk alone, never a share of
  // the wall time. Seconds, so that no load on the test machine makes the walk look like one.
  d.device_ns = 3e9, d.wall_ns = 2e9;
  pi = walk(d);
  EXPECT_EQ(pi["rung"], "a");
  EXPECT_EQ(pi["estimate"].get<double>(), 0.3);
  EXPECT_EQ(pi["rungs_tried"], 1);
  EXPECT_GE(pi["canary_host_ns"].get<double>(), 0);
  EXPECT_LT(pi["canary_host_ns"].get<double>(), 1e9);
  d.by_label["a"] = {std::nan(""), 0};
  EXPECT_EQ(walk(d)["rung"], "b");
  // Where each rung's canary ran, the accurate rung needing none.
  CanaryPlacement where;
  where.device = true;
  where.device_rungs = {"a"};
  where.host_rungs = {{"b", "why not"}};
  const auto block = canary_settings_json(in.settings, where, {"a", "b", "acc"}, 0.1);
  EXPECT_EQ(block["where"], nlohmann::ordered_json({{"a", "device"}, {"b", "host"}}));
  EXPECT_EQ(block["host_rungs"][0]["reason"], "why not");
  EXPECT_EQ(canary_settings_json(in.settings, where, {"a", "acc"}, 0.1)["where"], "device");
}

// The estimates the walks read, each device estimate beside the host canary's: within the
// device canary's tolerance they match, 1 % off they do not.
TEST(Tune, TrackingComparesTheDeviceEstimatesWithTheHostCanarys) {
  const AppDescriptor &app = find_app("gaussian3");
  Grid grid(64, 48, 120);
  for (int x = 0; x < 64; ++x) grid.at(x % 48, x) = 30;
  CanaryInput in;
  in.name = "line";
  in.grid = &grid;
  in.settings.min_tiles = 8;
  const CanaryStage a{&app, parse_scheme("rows:2"), {16, 8}};
  const std::map<std::string, LadderRung> rungs = {{"a", {"a", {a}, false, false}}};
  const RungMeasures here;
  const CanaryEstimate host = InputCanary(grid, in.settings, canary_seed(in.name)).estimate({a});
  for (const double scale : {1 + 2e-6, 1.01}) {
    DeviceEstimates d;
    d.by_label["a"] = host;
    d.by_label["a"].estimate *= scale;
    nlohmann::ordered_json estimates = nlohmann::ordered_json::array();
    estimate_rungs(in, rungs, here, estimates, &d);
    ASSERT_EQ(estimates.size(), 1u);
    EXPECT_EQ(estimates[0]["where"], "device");
    EXPECT_EQ(estimates[0]["host_estimate"].get<double>(), host.estimate);
    const auto vs = tracking_json(estimates)["device_vs_host"];
    EXPECT_EQ(vs["pairs"], 1);
    EXPECT_EQ(vs["within_tolerance"], scale < 1.001 ? 1 : 0) << scale;
  }
  EXPECT_TRUE(within_device_tolerance(std::nan(""), std::nan("")));
  EXPECT_FALSE(within_device_tolerance(1, std::nan("")));
}

// --canary-calibrate's rule (canary_calibration.hpp): k the ceil((n + 1) x confidence)-th smallest
// score, infinite when that index passes n, the scale never below 1; a margin of 0 stays 0.
TEST(Tune, ConformalScaleTakesTheQuantileScoreAndNeverNarrows) {
  std::vector<double> scores;
  for (int i = 19; i >= 1; --i) scores.push_back(0.1 * i);  // 0.1 .. 1.9, any order
  ConformalScale c = conformal_scale(scores, 0.95);         // ceil(20 x 0.95) = 19 of 19
  EXPECT_EQ(c.n, 19u);
  EXPECT_EQ(c.index, 19u);
  EXPECT_DOUBLE_EQ(c.score, 1.9);
  EXPECT_DOUBLE_EQ(c.scale, 1.9);
  c = conformal_scale(scores, 0.5);  // ceil(20 x 0.5) = 10: the 10th smallest, 1.0
  EXPECT_EQ(c.index, 10u);
  EXPECT_DOUBLE_EQ(c.score, 1.0);
  EXPECT_DOUBLE_EQ(c.scale, 1.0);
  c = conformal_scale({3, -1, 2, 5}, 0.6);  // ceil(5 x 0.6) = 3: 3
  EXPECT_EQ(c.index, 3u);
  EXPECT_DOUBLE_EQ(c.scale, 3);
  c = conformal_scale({-0.5, -2, 0.25}, 0.5);  // ceil(2) = 2: -0.5, the scale stays 1
  EXPECT_DOUBLE_EQ(c.score, -0.5);
  EXPECT_DOUBLE_EQ(c.scale, 1);
  scores.pop_back();  // 18 scores: ceil(19 x 0.95) = 19 > 18, nothing can be said
  c = conformal_scale(scores, 0.95);
  EXPECT_EQ(c.index, 19u);
  EXPECT_TRUE(std::isinf(c.score) && std::isinf(c.scale));
  EXPECT_TRUE(std::isinf(conformal_scale({}, 0.95).scale));
  EXPECT_DOUBLE_EQ(calibrated_margin(2, 1.5), 3);
  EXPECT_EQ(calibrated_margin(0, INFINITY), 0);
  EXPECT_TRUE(std::isinf(calibrated_margin(2, INFINITY)));
  EXPECT_TRUE(std::isnan(calibrated_margin(NAN, 2)));
}

// A calibration's pairs: those without finite numbers or a positive margin are skipped with the
// reason, the rest scored; its block says the quantile and the coverage before and after.
TEST(Tune, CanaryCalibrationSkipsWhatItCannotScoreAndSaysTheCoverage) {
  CanaryCalibration cal;
  for (int i = 1; i <= 19; ++i)
    cal.add({"r", "in" + std::to_string(i), "host", 1.0, 0.5, 1 + 0.1 * i});
  cal.add({"r", "a", "host", 1.0, 0, 1.5});         // every window sampled
  cal.add({"r", "b", "host", 1.0, INFINITY, 1.5});  // no information
  cal.add({"r", "c", "host", NAN, NAN, 1.5});       // a broken truth
  cal.skip("no training row at the rung's shape");
  const auto j = cal.json({"in"}, 0.95);
  EXPECT_EQ(j["pairs"], 19);
  EXPECT_EQ(j["skipped"], 4);
  EXPECT_EQ(j["skipped_reasons"].size(), 4u);
  EXPECT_EQ(j["quantile_index"], 19);
  // Scores (0.1 i) / 0.5 = 0.2 i: the largest, 3.8.
  EXPECT_NEAR(j["score_at_quantile"].get<double>(), 3.8, 1e-12);
  EXPECT_NEAR(j["scale"].get<double>(), 3.8, 1e-12);
  EXPECT_NEAR(j["training_coverage_raw"].get<double>(), 5.0 / 19, 1e-12);  // scores <= 1
  EXPECT_EQ(j["training_coverage"].get<double>(), 1.0);
  EXPECT_FALSE(j.contains("refused"));
  EXPECT_EQ(j["estimates"].size(), 19u);
  CanaryCalibration few;
  few.add({"r", "x", "host", 1.0, 0.5, 2.0});
  const auto f = few.json({"x"}, 0.95);
  EXPECT_TRUE(f["scale"].is_null() && f["score_at_quantile"].is_null() && f.contains("refused"));
}

// The walks and the estimates under a margin scale: a rung whose own bound is within the budget
// but whose calibrated one is not is refused, and the canary's margin is kept as raw_margin;
// without a scale nothing changes and no raw_margin is written.
TEST(Tune, CalibratedMarginsDecideTheWalkAndKeepTheRawOne) {
  const AppDescriptor &app = find_app("gaussian3");
  Grid grid(64, 48);
  CanaryInput in = textured(grid);
  const CanaryStage a{&app, parse_scheme("rows:2"), {16, 8}};
  const std::map<std::string, LadderRung> rungs = {
      {"a", {"a", {a}, false, false}},
      {"acc", {"acc", {{&app, parse_scheme("accurate"), {16, 8}}}, true, false}}};
  RungMeasures here;
  here["a"].error = 0.02, here["a"].time = 100;
  here["acc"].error = 0, here["acc"].time = 400;
  const CanaryEstimate e = InputCanary(grid, in.settings, canary_seed(in.name)).estimate({a});
  ASSERT_GT(e.margin, 0);
  const double budget = e.estimate + 1.5 * e.margin;
  auto walk = [&](const CanaryInput &on) {
    LadderWalks w({"a", "acc"}, budget, "a");
    w.walk(on, rungs, here);
    return w.json(nlohmann::ordered_json::object(), 95)["per_input"]["textured"];
  };
  auto pi = walk(in);
  EXPECT_EQ(pi["rung"], "a");
  EXPECT_EQ(pi["margin"].get<double>(), e.margin);
  EXPECT_FALSE(pi.contains("raw_margin"));
  in.margin_scale = 1.25;  // 1.25 x margin: still within
  pi = walk(in);
  EXPECT_EQ(pi["rung"], "a");
  EXPECT_DOUBLE_EQ(pi["margin"].get<double>(), 1.25 * e.margin);
  EXPECT_EQ(pi["raw_margin"].get<double>(), e.margin);
  in.margin_scale = 2;  // past the budget: the accurate rung
  EXPECT_EQ(walk(in)["rung"], "acc");
  nlohmann::ordered_json estimates = nlohmann::ordered_json::array();
  estimate_rungs(in, rungs, here, estimates);
  ASSERT_EQ(estimates.size(), 1u);
  EXPECT_DOUBLE_EQ(estimates[0]["margin"].get<double>(), 2 * e.margin);
  EXPECT_EQ(estimates[0]["raw_margin"].get<double>(), e.margin);
  const auto tracking = tracking_json(estimates);
  EXPECT_TRUE(tracking.contains("coverage_raw"));
  in.margin_scale.reset();
  estimates = nlohmann::ordered_json::array();
  estimate_rungs(in, rungs, here, estimates);
  EXPECT_EQ(estimates[0]["margin"].get<double>(), e.margin);
  EXPECT_FALSE(estimates[0].contains("raw_margin"));
  EXPECT_FALSE(tracking_json(estimates).contains("coverage_raw"));
}

}  // namespace
}  // namespace kperf
