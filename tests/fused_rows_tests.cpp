// The rolling design of fused chains (kperf pipeline --fuse all --fuse-rows H,
// schemes/fuse_roll.cl): held to the unfused chain bit for bit (accurate), to the chained CPU
// models with the first stage's rows:k on a tile as tall as the grid (perforated, f16, three
// stages, one app twice, a user app), on odd grids and strip heights that do not divide them, to
// NaN poisoning of the input rows it does not load, and to not_applicable rows for what it does not
// take; its keys and chains.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "chain_tune.hpp"
#include "cli_support.hpp"
#include "fused_program.hpp"
#include "fused_rows.hpp"
#include "pipeline_test_support.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;
using test::as_grid;
using test::ChainBench;
using test::test_options;
using test::variant_of;

// Every stage of `chain` in one rolling launch of strips of `rows` rows at the last stage's shape.
Chain rolling(Chain chain, int rows) {
  for (PipelineStage& s : chain) {
    s.wg = chain.back().wg;
    s.fused = true;
    s.fuse_rows = rows;
  }
  return chain;
}

// The accurate rolling chain equals the accurate chain of separate launches bit for bit (each
// output the same float operations on the same values: the apps' own row and column passes) and
// the chained references, for strip heights that divide the grid or not, one row, or more than
// the grid; a group of two rows of work-items; vec 1, 4 and 8.
TEST(FusedRows, AccurateEqualsTheUnfusedChainBitForBit) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 101);
  ChainBench runner(*env, test_options(1));
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median");
  const Variant acc = variant_of("accurate", "nn", "f32");
  const std::pair<WorkGroup, int> shapes[] = {{{8, 1, 4, 2}, 6},
                                              {{16, 2, 1, 3}, 9},
                                              {{4, 1, 8, 1}, 1},
                                              {{8, 2, 4, 4}, 64},
                                              {{8, 1, 4, 1}, 47}};
  for (const auto& [wg, rows] : shapes)
    for (const auto* first : {&g5, &median}) {
      const Chain chain = {{first, acc, wg}, {&s3, acc, wg}};
      const Measurement plain = runner.run(chain, input),
                        one = runner.run(rolling(chain, rows), input);
      const std::string what = first->name + " @" + wg_label(wg.x, wg.y, wg.vec, wg.py) + " rows " +
                               std::to_string(rows);
      ASSERT_TRUE(plain.ok() && one.ok()) << what << ": " << plain.reason << one.reason << "\n"
                                          << one.stages.back().build_log;
      EXPECT_EQ(one.stages[1].output, plain.stages[1].output) << what;
      EXPECT_TRUE(test::within_tolerance(as_grid(one.stages[1].output, w, h),
                                         chain_truth({first, &s3}, input).back()))
          << what;
    }
}

struct RollingCase {
  const char* name;
  Chain stages;
  bool small_integers = false;
};

std::vector<RollingCase> rolling_cases() {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median"), &g3 = find_app("gaussian3");
  const WorkGroup wide{8, 1, 4, 2}, tall{8, 2, 4, 3}, narrow{16, 1, 1, 1};
  const Variant acc = variant_of("accurate", "nn", "f32");
  return {
      {"rows:2/nn", rolling({{&g5, variant_of("rows:2", "nn", "f32"), wide}, {&s3, acc, wide}}, 6)},
      {"rows:2/li", rolling({{&g5, variant_of("rows:2", "li", "f32"), tall}, {&s3, acc, tall}}, 9)},
      {"rows:3/nn",
       rolling({{&median, variant_of("rows:3", "nn", "f32"), wide}, {&s3, acc, wide}}, 14)},
      {"rows:3/li",
       rolling({{&g5, variant_of("rows:3", "li", "f32"), narrow}, {&s3, acc, narrow}}, 5)},
      {"f16 in, f16 between, f16 out",
       rolling({{&g5, variant_of("rows:2", "li", "f16"), wide},
                {&s3, variant_of("accurate", "nn", "f16"), wide}},
               8),
       true},
      {"bf16",
       rolling({{&g5, variant_of("rows:3", "nn", "bf16"), tall},
                {&s3, variant_of("accurate", "nn", "bf16"), tall}},
               12),
       true},
      {"f16 in, f32 between",
       rolling({{&median, variant_of("rows:2", "li", "f16in"), wide}, {&s3, acc, wide}}, 10), true},
      {"three stages",
       rolling(
           {{&g3, variant_of("rows:2", "li", "f32"), wide}, {&median, acc, wide}, {&s3, acc, wide}},
           6)},
      {"one app twice",
       rolling({{&s3, variant_of("rows:3", "li", "f32"), narrow}, {&s3, acc, narrow}}, 10)},
  };
}

// A perforated rolling chain equals the unfused chain with rows:k at its first stage over a tile
// as tall as the grid (rolling_chain_model): kept rows by global coordinates, rebuilt from the
// grid's kept rows; rows:2/nn also the unfused chain at its own shape (a tie takes the row above,
// which every tile of an even block holds).
TEST(FusedRows, PerforatedEqualsTheUnfusedChainOnAGridTallTile) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  ChainBench runner(*env, test_options(1));
  for (const RollingCase& c : rolling_cases()) {
    const Grid input =
        c.small_integers ? test::small_integers(w, h, 102) : test::random_grid(w, h, 102);
    const Measurement out = runner.run(c.stages, input);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.reason << "\n" << out.stages.back().build_log;
    const Grid got = as_grid(out.stages.back().output, w, h);
    const StorageType* stored = c.stages.back().variant.precision_info().out;
    EXPECT_TRUE(test::within_tolerance(got, rolling_chain_model(c.stages, input), stored))
        << c.name;
    if (std::string(c.name) == "rows:2/nn")
      EXPECT_TRUE(test::within_tolerance(got, chain_model(c.stages, input).back(), stored));
  }
}

// A user app is a stage like a built-in: box5 (rows:2 li) then unsharp, against the model
// evaluated by their own fp64 truth kernels.
TEST(FusedRows, UserAppsAreStages) {
  KPERF_REQUIRE_DEVICE();
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const std::string apps = std::string(KPERF_TEST_SOURCE_DIR) + "/examples/apps/";
  const AppDescriptor &box5 = add_user_app(apps + "box5.cl"),
                      &unsharp = add_user_app(apps + "unsharp.cl");
  const int w = 53, h = 41;
  const Grid input = test::random_grid(w, h, 103);
  TruthSource truth(env, KPERF_TEST_KERNEL_ROOT);
  ChainBench runner(*env, test_options(1));
  const WorkGroup wg{8, 1, 4, 2};
  const Chain chain = rolling({{&box5, variant_of("rows:2", "li", "f32"), wg},
                               {&unsharp, variant_of("accurate", "nn", "f32"), wg}},
                              10);
  const Measurement out = runner.run(chain, input);
  ASSERT_TRUE(out.ok()) << out.reason << "\n" << out.stages.back().build_log;
  EXPECT_TRUE(test::within_tolerance(
      as_grid(out.stages.back().output, w, h),
      rolling_chain_model(chain, input, {}, {truth.evaluator(box5), truth.evaluator(unsharp)})));
}

// With every input element a rolling launch does not read poisoned with NaN (rolling_elements_read:
// the rows its strips load, the columns its groups load), the output is the clean run's, bit for
// bit: no skipped row is loaded.
TEST(FusedRows, NoStripReadsTheRowsItSkips) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 104);
  CoreOptions opt = test_options(1);
  ChainBench clean(*env, opt);
  opt.poison_unread = true;
  ChainBench dirty(*env, opt);
  long skipped = 0;
  for (const RollingCase& c : rolling_cases()) {
    const Measurement a = clean.run(c.stages, input), b = dirty.run(c.stages, input);
    ASSERT_TRUE(a.ok() && b.ok()) << c.name << ": " << a.reason << b.reason;
    const auto read = rolling_elements_read(c.stages, w, h);
    skipped += std::count(read.begin(), read.end(), 0);
    EXPECT_EQ(a.stages.back().output, b.stages.back().output) << c.name;
  }
  EXPECT_GT(skipped, 4 * w * h);  // rows:k skips lines of the grid
}

// Grids narrower than a group, shorter than a strip, one row or column: the edges' values. Heights
// of 1 mod 3 put a row that median's rows:3 rebuilds past the grid's last kept row, where nn
// takes the row above (the grid-tall tile ends r rows past the grid).
TEST(FusedRows, SmallAndOddGrids) {
  KPERF_REQUIRE_DEVICE();
  ChainBench runner(*env, test_options(1));
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median");
  const Variant acc = variant_of("accurate", "nn", "f32");
  const WorkGroup wg{8, 1, 4, 2};
  for (const auto& [w, h] : {std::make_pair(13, 9), {13, 13}, {1, 19}, {19, 1}, {3, 2}}) {
    const Grid input = test::random_grid(w, h, 105);
    for (const auto* app : {&g5, &median})
      for (const Variant& first :
           {acc, variant_of("rows:3", "li", "f32"), variant_of("rows:3", "nn", "f32")}) {
        const Chain chain = rolling({{app, first, wg}, {&s3, acc, wg}}, 4);
        const Measurement out = runner.run(chain, input);
        ASSERT_TRUE(out.ok()) << w << "x" << h << ": " << out.reason;
        EXPECT_TRUE(test::within_tolerance(as_grid(out.stages.back().output, w, h),
                                           rolling_chain_model(chain, input)))
            << w << "x" << h << " " << app->name << " " << first.id();
      }
  }
}

// What the rolling design does not take is a row naming the stage and why; a group too narrow for
// the chain's halo, or a strip that is not whole steps of py rows, is invalid_config.
TEST(FusedRows, WhatItDoesNotTakeIsARowThatSaysSo) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const Variant acc = variant_of("accurate", "nn", "f32");
  ChainBench runner(*env, test_options(1));
  const Grid input = test::random_grid(32, 24, 106);
  for (const char* scheme : {"cols:2", "stencil"}) {
    const Measurement out = runner.run(
        rolling({{&g5, variant_of(scheme, "nn", "f32"), {8, 1, 4}}, {&s3, acc, {8, 1, 4}}}, 8),
        input);
    EXPECT_EQ(out.status, Status::kNotApplicable) << scheme;
    EXPECT_EQ(out.failed_stage, 0);
    EXPECT_NE(out.reason.find("stage 1 (gaussian5): the rolling design"), std::string::npos)
        << out.reason;
  }
  const Measurement narrow =
      runner.run(rolling({{&g5, acc, {2, 1, 1}}, {&s3, acc, {2, 1, 1}}}, 8), input);
  EXPECT_EQ(narrow.status, Status::kInvalidConfig);
  EXPECT_NE(narrow.reason.find("leave no block of 4"), std::string::npos) << narrow.reason;
  const Measurement steps =
      runner.run(rolling({{&g5, acc, {8, 1, 4, 2}}, {&s3, acc, {8, 1, 4, 2}}}, 7), input);
  EXPECT_EQ(steps.status, Status::kInvalidConfig);
  EXPECT_NE(steps.reason.find("strips of 7 rows (--fuse-rows) are not whole steps of --py 2"),
            std::string::npos)
      << steps.reason;
}

// Keys and labels say the design: "fused" for the tile design as before, "fused-rows:H" for the
// rolling one; --fuse-rows makes one set of fused chains per value.
TEST(FusedRows, KeysAndChainsSayTheDesign) {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const Variant acc = variant_of("accurate", "nn", "f32");
  const Chain chain = {{&g5, acc, {8, 4, 4, 4}}, {&s3, acc, {8, 4, 4, 4}}};
  Chain tile = rolling(chain, 0);
  EXPECT_EQ(chain_key("blur-edges", tile, "camera", 64, 64),
            "blur-edges/fused/gaussian5:accurate/none@8x4v4y4 > "
            "sobel3:accurate/none@8x4v4y4/camera/64x64");
  EXPECT_EQ(chain_key("blur-edges", rolling(chain, 64), "camera", 64, 64),
            "blur-edges/fused-rows:64/gaussian5:accurate/none@8x4v4y4 > "
            "sobel3:accurate/none@8x4v4y4/camera/64x64");
  EXPECT_EQ(chain_label(rolling(chain, 64)).rfind("fused-rows:64: ", 0), 0u);
  StageSpace space{{acc}, {{8, 4, 4, 4}}};
  const auto chains = chains_of({&g5, &s3}, {space, space}, {false, true}, {0, 64, 256});
  ASSERT_EQ(chains.size(), 4u);
  EXPECT_EQ(fuse_rows(chains[0]) + fuse_rows(chains[1]), 0);
  EXPECT_FALSE(is_fused(chains[0]));
  EXPECT_TRUE(is_fused(chains[1]));
  EXPECT_EQ(fuse_rows(chains[2]), 64);
  EXPECT_EQ(fuse_rows(chains[3]), 256);
}

// The program's text and options: the strip height is one -D option, the text the rolling
// design's files, each stage's app file as it is.
TEST(FusedRows, TheStripHeightIsOneBuildOption) {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const Variant acc = variant_of("accurate", "nn", "f32");
  const Chain chain = rolling({{&g5, acc, {32, 1, 4, 2}}, {&s3, acc, {32, 1, 4, 2}}}, 256);
  const FusedProgram p = fused_program(chain, KPERF_TEST_KERNEL_ROOT, {}, "");
  EXPECT_NE(p.options.find(" -DKPERF_FUSE_ROWS=256"), std::string::npos) << p.options;
  EXPECT_NE(p.source.find("#define KPERF_ROLL_BLOCK_X 124\n"), std::string::npos);
  EXPECT_NE(p.source.find("#include \"fuse_roll_stage.cl\""), std::string::npos);
  const FusedProgram tile = fused_program(rolling(chain, 0), KPERF_TEST_KERNEL_ROOT, {}, "");
  EXPECT_EQ(tile.options.find("KPERF_FUSE_ROWS"), std::string::npos);
  EXPECT_EQ(tile.source.find("roll"), std::string::npos);
  // 32 x 4 columns, 124 stored; the input ring 2 steps of 2 rows of 136 floats, sobel3's input
  // ring 2 x 2 rows of 132.
  EXPECT_EQ(rolling_shape(chain).block_x(), 124);
  EXPECT_EQ(rolling_local_bytes(chain), (4u * 136 + 4u * 132) * sizeof(float));
  EXPECT_EQ(rolling_groups(chain, 8192, 8192), std::make_pair(67, 32));
}

// kperf pipeline --fuse none,all --fuse-rows 0,4: separate launches, the tile design and the
// rolling one, rows and keys saying which, the three outputs of the accurate chain equal; bad
// lists and --fuse-rows without a fused chain are one line and exit 2.
TEST(FusedRowsCli, EachStripHeightIsASetOfFusedChains) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  const std::string args =
      "pipeline --pipeline blur-edges --stage '2:--wg 8x1 --vec 4 --py 2' --input synthetic:smooth "
      "--size 37x29 --warmup 0 --reps 1 --quiet --out " +
      (dir / "p.json").string();
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {" --fuse none --fuse-rows 4", "--fuse-rows 4: the fused designs of --fuse all"},
           {" --fuse all --fuse-rows 4,4", "--fuse-rows 4,4: 4 is given twice"},
           {" --fuse all --fuse-rows 64,x", "invalid --fuse-rows 'x'"}}) {
    const test::CliRun r = test::kperf_cli(args + bad, dir);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_TRUE(test::one_line(r.err)) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "p.json")) << bad;
  }
  fs::create_directories(dir / "o");
  const test::CliRun r = test::kperf_cli(
      args + " --fuse none,all --fuse-rows 0,4 --save-outputs " + (dir / "o").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(read_file((dir / "p.json").string()));
  EXPECT_EQ(doc["context"]["pipeline"]["fuse_rows"], nlohmann::json({0, 4}));
  ASSERT_EQ(doc["results"].size(), 3u);
  std::vector<std::vector<float>> outputs;
  for (const auto& row : doc["results"]) {
    ASSERT_EQ(row["status"], "ok") << row.dump();
    const std::string key = row["key"];
    const bool rolling = key.rfind("blur-edges/fused-rows:4/", 0) == 0;
    EXPECT_EQ(row.value("fuse_rows", 0), rolling ? 4 : 0) << key;
    EXPECT_EQ(row["fused"].get<bool>(), rolling || key.rfind("blur-edges/fused/", 0) == 0) << key;
    outputs.push_back(read_npy(row["output_file"].get<std::string>()).data);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
}

}  // namespace
}  // namespace kperf
