// Device tests of the kernel axes and launch perforation on the first OpenCL device (PoCL in CI):
// relaxed barriers, hotspot's skipped steps, bilateral's loop perforation and weight tables.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "apps.hpp"
#include "kernel_axes.hpp"
#include "schemes.hpp"
#include "synthetic.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

using test::axes;
using test::Outcome;

TEST(Relax, SingleItemGroupsEqualTheModelAndRowsKeepTheSpread) {
  KPERF_REQUIRE_DEVICE();
  AxesSpec a = axes("accurate,stencil,rows:2,cols:2", "li", "local,image");
  a.kernel["relax"] = "skip";
  const auto variants = parse_variants(a);
  for (const auto* name : {"gaussian5", "median"}) {
    const AppDescriptor& app = find_app(name);
    const Grid in = test::random_grid(33, 21, 91);
    const Outcome o = test::run_through_runner(*env, {&app}, variants, {{1, 1}, {16, 4}}, in);
    const GridD model_in = to_double(in.data, in.width, in.height);
    for (const auto& v : variants) {
      const ResultRow* single = o.find(app.name, v, {1, 1});
      const ResultRow* group = o.find(app.name, v, {16, 4});
      ASSERT_TRUE(single && group);
      if (v.load_path().reads_image && !env->info().image_support) continue;
      if (const auto verdict = check_variant(v, app, {1, 1})) {
        EXPECT_EQ(single->status, verdict->status);
        continue;
      }
      ASSERT_EQ(single->status, Status::kOk)
          << single->key << ": " << single->reason << single->build_log;
      EXPECT_TRUE(test::within_tolerance(o.outputs.at(single->key),
                                         model_run(app, v, {1, 1}, model_in, nullptr, 1)))
          << single->key;
      ASSERT_EQ(group->status, Status::kOk) << group->key << ": " << group->reason;
      EXPECT_EQ(group->kernel_axes.at("relax"), "skip");
      ASSERT_EQ(group->error_reps.size(), 5u) << group->key;
      EXPECT_NE(group->key.find("/relax:skip/"), std::string::npos) << group->key;
    }
  }
}

// The global path has no tile and so no barrier to relax: a not_applicable row.
TEST(Relax, GlobalPathIsNotApplicable) {
  KPERF_REQUIRE_DEVICE();
  AxesSpec a = axes("rows:2", "nn", "global");
  a.kernel["relax"] = "skip";
  const Outcome o = test::run_through_runner(*env, {&find_app("gaussian3")}, parse_variants(a),
                                             {{8, 4}}, test::random_grid(16, 16, 3));
  ASSERT_EQ(o.rows.size(), 1u);
  EXPECT_EQ(o.rows[0].status, Status::kNotApplicable);
  EXPECT_NE(o.rows[0].reason.find("no tile"), std::string::npos) << o.rows[0].reason;
}

// Launch perforation runs ceil(N (1 - R)) steps and measures the error against all N.
TEST(IterationsSkip, RunsFewerStepsOfTheAccurateSolver) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("hotspot");
  HotspotInput chip = make_synthetic_chip(40, 24);
  AxesSpec a = axes("accurate,rows:2", "nn", "local");
  a.iterations_skips = "0,0.5,0.75";
  const auto variants = parse_variants(a);
  ASSERT_EQ(variants.size(), 6u);
  const Outcome o =
      test::run_through_runner(*env, {&app}, variants, {{8, 4}}, chip.temp, &chip.power, 6);
  const GridD in = to_double(chip.temp.data, 40, 24), pw = to_double(chip.power.data, 40, 24);
  for (const auto& v : variants) {
    const ResultRow* row = o.find(app.name, v, {8, 4});
    ASSERT_TRUE(row && row->ok()) << v.axes_key();
    EXPECT_EQ(row->iterations, v.iterations_skip == 0.5 ? 3 : v.iterations_skip == 0.75 ? 2 : 6);
    EXPECT_TRUE(
        test::within_tolerance(o.outputs.at(row->key), model_run(app, v, {8, 4}, in, &pw, 6)))
        << row->key;
    if (v.is_accurate() && v.iterations_skip > 0) {
      // Fewer steps of the accurate solver: the same as the reference run for that many steps.
      EXPECT_TRUE(test::within_tolerance(o.outputs.at(row->key),
                                         reference_run(app, in, &pw, row->iterations)));
      EXPECT_GT(row->error->mre, 0.0) << row->key;
    }
  }
  // Image apps get a not_applicable row for launch perforation.
  AxesSpec b = axes("accurate", "nn", "local");
  b.iterations_skips = "0.5";
  const Outcome img = test::run_through_runner(*env, {&find_app("median")}, parse_variants(b),
                                               {{8, 4}}, test::random_grid(16, 16, 4));
  ASSERT_EQ(img.rows.size(), 1u);
  EXPECT_EQ(img.rows[0].status, Status::kNotApplicable);
}

// Bilateral's own axes at non-default sigmas: loop perforation (every other window tap) and
// computed spatial weights, on every load path and under input perforation, each against the CPU
// model; the perforated loop really skips taps (it differs from the exact filter).
TEST(Bilateral, LoopPerforationAndWeightsMatchTheirModels) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("bilateral");
  AppParams params;
  params.sigma_color = 30.0;
  params.sigma_space = 1.5;
  AxesSpec a = axes("accurate,stencil,rows:2", "nn,li", "local,global,image");
  a.kernel["loop-skip"] = "1,2";
  a.kernel["weights"] = "table,computed";
  const auto variants = parse_variants(a);
  ASSERT_EQ(variants.size(), 48u);
  const Grid input = test::random_grid(37, 29, 11);
  const GridD in = to_double(input.data, 37, 29);
  const std::vector<WorkGroup> wgs = {{8, 4}, {4, 2, 2, 2}};
  // The fast tier runs each variant at one of the shapes, in turn.
  const test::ShapeSample sample(
      variants, [](const Variant& v) { return v.id(); }, wgs, 1, 0);
  const Outcome o = test::run_through_runner(*env, {&app}, variants, wgs, input, nullptr, 1,
                                             KPERF_TEST_KERNEL_ROOT, false, params, "", sample);
  const GridD exact = reference_run(app, in, nullptr, 1, params);
  for (const auto& v : variants)
    for (const auto& wg : wgs) {
      if (!sample(v, wg)) continue;
      const ResultRow* row = o.find(app.name, v, wg);
      ASSERT_TRUE(row) << v.axes_key();
      ASSERT_TRUE(row->ok()) << row->key << ": " << row->status << " " << row->reason;
      const std::string loop_skip = kernel_value_name(v, "loop-skip");
      EXPECT_EQ(row->kernel_axes.at("loop_skip"), loop_skip);
      EXPECT_EQ(row->kernel_axes.at("weights"), kernel_value_name(v, "weights"));
      const Grid& out = o.outputs.at(row->key);
      EXPECT_TRUE(test::within_tolerance(out, model_run(app, v, wg, in, nullptr, 1, params)))
          << row->key;
      if (v.is_accurate() && loop_skip == "1") EXPECT_TRUE(test::within_tolerance(out, exact));
      if (v.is_accurate() && loop_skip == "2") {
        EXPECT_FALSE(test::within_tolerance(out, exact)) << row->key;
        EXPECT_GT(row->error->mre, 1e-4) << row->key;
      }
    }
  // The default sigmas differ from these: the parameters reach the kernel.
  const WorkGroup first = sample(variants[0], wgs[0]) ? wgs[0] : wgs[1];
  EXPECT_FALSE(test::within_tolerance(o.outputs.at(o.find(app.name, variants[0], first)->key),
                                      reference_run(app, in, nullptr, 1)));
  // Apps without a window loop or a weight table get not_applicable rows.
  AxesSpec b = axes("accurate", "nn", "local");
  b.kernel["loop-skip"] = "2";
  AxesSpec c = axes("accurate", "nn", "local");
  c.kernel["weights"] = "computed";
  for (const AxesSpec& spec : {b, c}) {
    const Outcome img =
        test::run_through_runner(*env, {&find_app("gaussian5")}, parse_variants(spec), {{8, 4}},
                                 test::random_grid(16, 16, 4));
    ASSERT_EQ(img.rows.size(), 1u);
    EXPECT_EQ(img.rows[0].status, Status::kNotApplicable);
    EXPECT_NE(img.rows[0].reason.find("bilateral"), std::string::npos) << img.rows[0].reason;
  }
}

}  // namespace
}  // namespace kperf
