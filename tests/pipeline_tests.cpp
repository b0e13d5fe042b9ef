// kperf pipeline: chains of two apps held against the chained CPU models of each stage's scheme,
// NaN poisoning of what every stage skips, stages that cannot connect, and the command's bad
// input and document.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "bound_input.hpp"
#include "cli_support.hpp"
#include "fused_model.hpp"
#include "io.hpp"
#include "pipeline_command.hpp"
#include "pipeline_test_support.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;
using test::as_grid;
using test::ChainBench;
using test::test_options;
using test::variant_of;

struct ChainCase {
  const char* name;
  std::vector<PipelineStage> stages;
};

std::vector<ChainCase> chain_cases() {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median");
  const WorkGroup wg{8, 4}, wide{8, 4, 2, 2};
  return {
      {"accurate f32",
       {{&g5, variant_of("accurate", "nn", "f32"), wg},
        {&s3, variant_of("accurate", "nn", "f32"), wg}}},
      {"rows:2 then rows:2/li",
       {{&g5, variant_of("rows:2", "nn", "f32"), wide},
        {&s3, variant_of("rows:2", "li", "f32", "global"), wg}}},
      {"f16 between",
       {{&median, variant_of("cols:2", "li", "f16"), wg},
        {&s3, variant_of("stencil", "nn", "f16in"), wide}}},
      {"output scheme, host-packed first stage",
       {{&g5, variant_of("rows:2", "nn", "f32", "local", "none", "host"), wg},
        {&s3, variant_of("accurate", "nn", "f32", "local", "rows:2"), wg}}},
  };
}

// Every stage's output equals its scheme's CPU model applied to the input the stage received,
// and an all-f32 chain equals the chained models end to end.
TEST(Pipeline, StagesEqualTheChainedModelsOfTheirSchemes) {
  KPERF_REQUIRE_DEVICE();
  const int w = 48, h = 40;
  const Grid input = test::random_grid(w, h, 55);
  CoreOptions opt = test_options(2);
  ChainBench runner(*env, opt);
  for (const ChainCase& c : chain_cases()) {
    const Measurement out = runner.run(c.stages, input);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.reason;
    ASSERT_EQ(out.samples_ns.size(), 2u) << c.name;
    Grid received = input;
    for (std::size_t k = 0; k < c.stages.size(); ++k) {
      const PipelineStage& s = c.stages[k];
      const GridD model = chain_model({s}, received).back();
      const Grid got = as_grid(out.stages[k].output, w, h);
      EXPECT_TRUE(test::within_tolerance(got, model, s.variant.precision_info().out))
          << c.name << ", stage " << k + 1;
      EXPECT_EQ(out.stages[k].samples_ns.size(), 2u);
      received = got;
    }
    if (std::string(c.name) == "accurate f32" || std::string(c.name) == "rows:2 then rows:2/li")
      EXPECT_TRUE(test::within_tolerance(as_grid(out.stages.back().output, w, h),
                                         chain_model(c.stages, input).back()))
          << c.name << ": end to end";
  }
}

// With every element a stage does not read poisoned with NaN (the first stage's input, and the
// buffer between the stages), every stage's output is the clean run's, bit for bit.
TEST(Pipeline, NoStageReadsWhatItSkips) {
  KPERF_REQUIRE_DEVICE();
  const int w = 48, h = 40;
  const Grid input = test::random_grid(w, h, 56);
  CoreOptions opt = test_options(1);
  ChainBench clean(*env, opt);
  opt.poison_unread = true;
  ChainBench dirty(*env, opt);
  int skipped_somewhere = 0;
  for (const ChainCase& c : chain_cases()) {
    if (c.stages[0].variant.host_perforate) continue;  // its input is packed on the host
    const Measurement a = clean.run(c.stages, input), b = dirty.run(c.stages, input);
    ASSERT_TRUE(a.ok() && b.ok()) << c.name << ": " << a.reason << b.reason;
    for (std::size_t k = 0; k < c.stages.size(); ++k) {
      const auto read =
          elements_read_by_any(c.stages[k].variant, c.stages[k].app->radius, c.stages[k].wg, w, h);
      for (char r : read) skipped_somewhere += !r;
      for (std::size_t i = 0; i < a.stages[k].output.size(); ++i) {
        ASSERT_TRUE(std::isfinite(b.stages[k].output[i]))
            << c.name << " stage " << k + 1 << " " << i;
        ASSERT_EQ(a.stages[k].output[i], b.stages[k].output[i]) << c.name << " stage " << k + 1;
      }
    }
  }
  EXPECT_GT(skipped_somewhere, w * h);  // the perforated stages skip rows and columns
}

// Stages whose buffer between them would need a conversion, or whose input is packed on the host
// or read as an image, do not connect: a not_applicable row naming the stage.
TEST(Pipeline, StagesThatCannotConnectAreRowsThatSaySo) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const WorkGroup wg{8, 4};
  CoreOptions opt = test_options(1);
  ChainBench runner(*env, opt);
  const Grid input = test::random_grid(32, 32, 57);
  const std::pair<Variant, const char*> cases[] = {
      {variant_of("accurate", "nn", "f16in"), "stores f32 and this stage reads f16"},
      {variant_of("rows:2", "nn", "f32", "local", "none", "host"), "host perforation"},
      {variant_of("accurate", "nn", "f32", "image"), "image load path"}};
  for (const auto& [second, says] : cases) {
    const Measurement out =
        runner.run({{&g5, variant_of("accurate", "nn", "f32"), wg}, {&s3, second, wg}}, input);
    EXPECT_EQ(out.status, Status::kNotApplicable) << says;
    EXPECT_EQ(out.failed_stage, 1);
    EXPECT_NE(out.reason.find("stage 2 (sobel3)"), std::string::npos) << out.reason;
    EXPECT_NE(out.reason.find(says), std::string::npos) << out.reason;
  }
}

// The accurate chain, the speedups' baseline, approximates nothing: a stage with a relaxed
// barrier (a race by design), half storage or another load path's exactness follows is_exact.
TEST(Pipeline, ExactChainsApproximateNothing) {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const WorkGroup wg{8, 4};
  AxesSpec relaxed;
  relaxed.kernel["relax"] = "skip";
  const Variant accurate = variant_of("accurate", "nn", "f32");
  const std::pair<Variant, bool> cases[] = {{accurate, true},
                                            {variant_of("accurate", "nn", "f32", "global"), true},
                                            {parse_variants(relaxed).front(), false},
                                            {variant_of("accurate", "nn", "f16"), false},
                                            {variant_of("rows:2", "nn", "f32"), false}};
  for (const auto& [second, exact] : cases)
    EXPECT_EQ(exact_chain({{&g5, accurate, wg}, {&s3, second, wg}}), exact) << second.id();
}

// The chained truth is each reference applied to the one before: sobel3's truth of gaussian5's.
TEST(Pipeline, TruthIsTheChainOfReferences) {
  const Grid input = test::random_grid(24, 20, 58);
  const std::vector<const AppDescriptor*> apps = parse_pipeline("blur-edges");
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_EQ(apps[0]->name, "gaussian5");
  EXPECT_EQ(apps[1]->name, "sobel3");
  const std::vector<GridD> truth = chain_truth(apps, input);
  const GridD blurred = reference_run(*apps[0], to_double(input.data, 24, 20), nullptr, 1);
  const GridD edges = reference_run(*apps[1], blurred, nullptr, 1);
  EXPECT_EQ(truth[0].data, blurred.data);
  EXPECT_EQ(truth[1].data, edges.data);
  EXPECT_EQ(parse_pipeline("denoise-edges")[0]->name, "median");
}

// A user app is a stage like any other: its output equals its scheme's CPU model evaluated by
// its own fp64 truth kernel, and the chained truth runs that kernel where a built-in runs its
// CPU reference (box5's truth checked here against the 5x5 mean computed in the test).
TEST(Pipeline, UserAppStageEqualsItsModelAndItsTruthIsItsFp64Kernel) {
  KPERF_REQUIRE_DEVICE();
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor& box5 =
      add_user_app(std::string(KPERF_TEST_SOURCE_DIR) + "/examples/apps/box5.cl");
  const AppDescriptor& s3 = find_app("sobel3");
  const int w = 40, h = 36;
  const Grid input = test::random_grid(w, h, 59);
  TruthSource truth(env, KPERF_TEST_KERNEL_ROOT);
  BoundInput bound = bind_input({&box5, &s3}, "input", input);
  ASSERT_TRUE(truth.compute(bound));
  ASSERT_EQ(bound.truth_problem, "");
  EXPECT_EQ(bound.references[0], "fp64-kernel");
  EXPECT_EQ(bound.references[1], "cpu-double");
  const std::vector<GridD>& chained = bound.truths.grids();
  double worst = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double sum = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          sum += input.at(std::clamp(y + dy, 0, h - 1), std::clamp(x + dx, 0, w - 1));
      // Relative: the kernel's 1.0f / 25.0f stays a float constant in the fp64 build.
      worst = std::max(worst, std::fabs(chained[0].at(y, x) - sum / 25) / std::max(1.0, sum / 25));
    }
  EXPECT_LT(worst, 1e-7);
  EXPECT_EQ(chained[1].data, reference_run(s3, chained[0], nullptr, 1).data);
  ChainBench runner(*env, test_options(1));
  const std::vector<PipelineStage> chain = {{&box5, variant_of("rows:2", "li", "f16"), {8, 4}},
                                            {&s3, variant_of("cols:2", "nn", "f16in"), {8, 4}}};
  const Measurement out = runner.run(chain, input);
  ASSERT_TRUE(out.ok()) << out.reason;
  Grid received = input;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const GridD model =
        chain_model({chain[k]}, received, {}, {truth.evaluator(*chain[k].app)}).back();
    const Grid got = as_grid(out.stages[k].output, w, h);
    EXPECT_TRUE(test::within_tolerance(got, model, chain[k].variant.precision_info().out))
        << "stage " << k + 1;
    received = got;
  }
}

using Cli = test::CliRun;
using test::kperf_cli;

// An unknown stage, stages that cannot connect, or a stage option aimed at a stage the chain
// does not have: one line naming it, exit 2, no file.
TEST(PipelineCli, BadInputGetsOneLineAndNoFile) {
  test::TempDir dir;
  const std::string out = " --size 32 --out " + (dir / "p.json").string();
  const std::pair<std::string, const char*> cases[] = {
      {"pipeline --pipeline gaussian5,sobel9", "stage 2: unknown app 'sobel9'"},
      {"pipeline --pipeline hotspot,sobel3", "stage 1 (hotspot) cannot connect"},
      {"pipeline --pipeline sobel3", "a chain of two or more apps"},
      {"pipeline --pipeline blur-edges --stage '3:--schemes rows:2'", "has no stage 3 (it has 2)"},
      {"pipeline --pipeline blur-edges --stage 'x:--schemes rows:2'", "expected K:OPTIONS"},
      {"pipeline --pipeline blur-edges --stage '1:--schemes rows:9x'",
       "--stage 1:--schemes rows:9x"},
      {"pipeline --pipeline blur-edges --stage '2:--bogus 1'", "--stage 2:--bogus 1"},
      {"pipeline --pipeline blur-edges --stage 1: --stage 1:", "--stage 1 is given twice"},
      {"pipeline --stage 1:", "needs --pipeline"},
      {"pipeline --pipeline box5,sobel3", "stage 1: unknown app 'box5'"},
      {"pipeline --pipeline blur-edges --app-file missing.cl",
       "app file missing.cl: does not exist"}};
  for (const auto& [args, expect] : cases) {
    const Cli r = kperf_cli(args + out, dir);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "p.json")) << args;
  }
}

// A run writes one document: every chain of the stages' product plus the accurate chains, each
// stage's time and error against the chained truth, and speedups against the accurate chain.
TEST(PipelineCli, RunWritesEveryChainWithStageTimesAndErrors) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  const Cli r = kperf_cli(
      "pipeline --pipeline blur-edges --stage '1:--schemes rows:2 --precision f32,f16' "
      "--stage '2:--schemes rows:2 --precision f32,f16in --wg 8x4' --input synthetic:smooth "
      "--size 40 --warmup 1 --reps 3 --quiet --out " +
          (dir / "p.json").string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "p.json").string()));
  EXPECT_EQ(doc["kind"], "pipeline");
  EXPECT_EQ(doc["context"]["pipeline"]["stages"], nlohmann::json({"gaussian5", "sobel3"}));
  const auto& rows = doc["results"];
  // Each stage: accurate f32 (added for the baseline) and rows:2 in two precisions.
  ASSERT_EQ(rows.size(), 9u);
  int ok = 0, unconnected = 0;
  double fastest_exact = std::numeric_limits<double>::infinity();
  for (const auto& row : rows) {
    if (row["status"] == "not_applicable") {
      ++unconnected;
      EXPECT_NE(row["reason"].get<std::string>().find("stage 2"), std::string::npos);
      continue;
    }
    ASSERT_EQ(row["status"], "ok") << row.dump();
    ++ok;
    ASSERT_EQ(row["stages"].size(), 2u);
    // Every chain sample is the sum of its stages' launches in that sample: the chain's mean is
    // the sum of the stages' means, and its extremes lie between the sums of theirs.
    double mean = 0, lowest = 0, highest = 0;
    bool exact = true;
    for (const auto& s : row["stages"]) {
      EXPECT_TRUE(s["errors"]["mre"].is_number()) << s.dump();
      EXPECT_EQ(s["error"], s["errors"][s["metric"].get<std::string>()]) << s.dump();
      mean += s["time_ns"]["mean"].get<double>();
      lowest += s["time_ns"]["min"].get<double>();
      highest += s["time_ns"]["max"].get<double>();
      exact = exact && s["variant"] == "accurate/none";
    }
    EXPECT_NEAR(row["time_ns"]["mean"].get<double>(), mean, 1e-9 * mean) << row.dump();
    EXPECT_GE(row["time_ns"]["min"].get<double>(), lowest);
    EXPECT_LE(row["time_ns"]["max"].get<double>(), highest);
    EXPECT_EQ(row["final_error"], row["stages"][1]["error"]);
    EXPECT_EQ(row["samples_ns"].size(), 3u);
    EXPECT_EQ(row["exact"].get<bool>(), exact) << row.dump();
    // Speedups against the fastest exact chain on the input, recomputed from the rows.
    EXPECT_NEAR(row["speedup"].get<double>() * row["time_ns"]["median"].get<double>(),
                row["accurate_time_ns"].get<double>(),
                1e-9 * row["accurate_time_ns"].get<double>());
    EXPECT_EQ(row["intermediate"].size(), 1u);
    if (exact) {
      EXPECT_LT(row["final_error"].get<double>(), 1e-5);
      fastest_exact = std::min(fastest_exact, row["time_ns"]["median"].get<double>());
    } else {
      EXPECT_GT(row["final_error"].get<double>(), 1e-4) << "rows:2 skips half the rows";
    }
  }
  for (const auto& row : rows)
    if (row["status"] == "ok") EXPECT_EQ(row["accurate_time_ns"].get<double>(), fastest_exact);
  EXPECT_EQ(ok, 5);           // f32 between: 2 x 2 chains; f16 between: rows:2 f16 > f16in
  EXPECT_EQ(unconnected, 4);  // an f32 stage before an f16in one, or f16 before f32
}

// --fuse none,all: every chain once in separate launches and once fused at each shape of the
// last stage; fused rows say so, have the chain's time alone and the last stage's error, and
// --save-outputs writes each chain's final output where its output_file says (and each earlier
// stage's of separate launches where the stage's says), the accurate
// fused chain's that of the accurate unfused one at the same shape.
TEST(PipelineCli, FuseRunsEveryChainFusedBesideUnfusedAndSavesOutputs) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  const std::string args =
      "pipeline --pipeline blur-edges --stage '1:--schemes rows:2 --wg 8x4' --stage '2:--wg "
      "8x4 --vec 1,2' --input synthetic:smooth --size 40 --warmup 1 --reps 3 --quiet --out " +
      (dir / "p.json").string();
  std::ofstream(dir / "a-file") << "not a directory";
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {" --fuse some", "--fuse some: expected none, all or none,all"},
           {" --fuse all,all", "all is given twice"},
           {" --save-outputs " + (dir / "a-file" / "deeper").string(),
            "cannot create or write directory"}}) {
    const Cli r = kperf_cli(args + bad, dir);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "p.json")) << bad;
  }
  fs::create_directories(dir / "outputs");
  const Cli r =
      kperf_cli(args + " --fuse none,all --save-outputs " + (dir / "outputs").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "p.json").string()));
  EXPECT_EQ(doc["context"]["pipeline"]["fuse"], nlohmann::json({"none", "all"}));
  const auto& rows = doc["results"];
  ASSERT_EQ(rows.size(), 8u);  // {accurate, rows:2} x {8x4, 8x4v2}, each unfused and fused
  std::map<std::string, Grid> accurate;  // by "fused?" and the last stage's shape
  double fastest_unfused = INFINITY;
  for (const auto& row : rows) {
    ASSERT_EQ(row["status"], "ok") << row.dump();
    const bool fused = row["fused"];
    EXPECT_EQ(row["key"].get<std::string>().find("blur-edges/fused/") == 0, fused);
    const auto& stages = row["stages"];
    if (fused) {
      EXPECT_EQ(stages[0]["wg"], stages[1]["wg"]) << "one launch shape";
      EXPECT_FALSE(stages[0].contains("time_ns") || stages[1].contains("time_ns"));
      EXPECT_FALSE(stages[0].contains("error")) << "stage 1's outputs stay in local memory";
    }
    EXPECT_EQ(row["final_error"], stages[1]["error"]);
    // Every stage's output that left the device is saved: a fused chain's last one alone.
    EXPECT_EQ(stages[1]["output_file"], row["output_file"]);
    ASSERT_EQ(stages[0].contains("output_file"), !fused) << row.dump();
    if (!fused) EXPECT_EQ(read_npy(stages[0]["output_file"].get<std::string>()).width, 40);
    const Grid saved = read_npy(row["output_file"].get<std::string>());
    EXPECT_EQ(saved.width, 40);
    if (row["exact"].get<bool>()) {
      EXPECT_LT(row["final_error"].get<double>(), 1e-5);
      accurate[std::to_string(fused) + stages[1]["wg"].get<std::string>()] = saved;
      if (!fused)
        fastest_unfused = std::min(fastest_unfused, row["time_ns"]["median"].get<double>());
    }
  }
  ASSERT_EQ(accurate.size(), 4u);
  for (const char* shape : {"8x4", "8x4v2"})
    EXPECT_EQ(accurate[std::string("1") + shape].data, accurate[std::string("0") + shape].data)
        << shape;
  for (const auto& row : rows) EXPECT_EQ(row["accurate_time_ns"].get<double>(), fastest_unfused);
  // An output that cannot be written leaves its chain measured and says so.
  const Cli faulted = kperf_cli(args + " --fuse all --save-outputs " + (dir / "outputs").string(),
                                dir, "KPERF_FAULT=save");
  const nlohmann::json lost = nlohmann::json::parse(read_file((dir / "p.json").string()));
  ASSERT_EQ(lost["results"].size(), 4u) << faulted.err;
  for (const auto& row : lost["results"]) {
    EXPECT_EQ(row["status"], "host_error") << row.dump();
    EXPECT_NE(row["reason"].get<std::string>().find("--save-outputs: "), std::string::npos);
    EXPECT_TRUE(row.contains("time_ns") && row.contains("final_error")) << row.dump();
  }
}

// A user app given with --app-file is a stage: its rows name its fp64 truth kernel, and the
// accurate chain matches the chained truth.
TEST(PipelineCli, UserAppIsAStage) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  const Cli r = kperf_cli("pipeline --app-file " + std::string(KPERF_TEST_SOURCE_DIR) +
                              "/examples/apps/box5.cl --pipeline box5,sobel3 --stage "
                              "'1:--schemes rows:2' --input synthetic:smooth --size 40 --warmup 1 "
                              "--reps 3 --quiet --out " +
                              (dir / "p.json").string(),
                          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "p.json").string()));
  ASSERT_EQ(doc["results"].size(), 2u);
  for (const auto& row : doc["results"]) {
    ASSERT_EQ(row["status"], "ok") << row.dump();
    EXPECT_EQ(row["stages"][0]["app"], "box5");
    EXPECT_EQ(row["stages"][0]["reference"], "fp64-kernel");
    EXPECT_EQ(row["stages"][1]["reference"], "cpu-double");
    if (row["stages"][0]["variant"] == "accurate/none")
      EXPECT_LT(row["final_error"].get<double>(), 1e-5);
    else
      EXPECT_GT(row["stages"][0]["error"].get<double>(), 0.0);
  }
}

double linear_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p / 100 * (static_cast<double>(v.size()) - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// A stage's variant without its precision, and the type it reads its input in: half storage
// throughout is f16 stages and an f16in last one.
std::string approximation_read(const std::string& variant) {
  for (const char* half : {"/f16in", "/f16"})
    if (variant.size() > std::strlen(half) &&
        variant.compare(variant.size() - std::strlen(half), std::string::npos, half) == 0)
      return variant.substr(0, variant.size() - std::strlen(half)) + " reading f16";
  return variant + " reading f32";
}

// The median of the samples of every rank row of `key`.
double rank_median(const nlohmann::json& rows, const std::string& key) {
  std::vector<double> samples;
  for (const auto& r : rows)
    if (r["stage"] == "rank" && r["key"] == key && r["status"] == "ok")
      for (const auto& t : r["samples_ns"]) samples.push_back(t.get<double>());
  return samples.empty() ? NAN : linear_percentile(samples, 50);
}

// The key of a chain's row on another input: the chain's part of `key` with that input.
std::string on_input(const std::string& key, const std::string& input) {
  const std::size_t size = key.rfind('/'), name = key.rfind('/', size - 1);
  return key.substr(0, name + 1) + input + key.substr(size);
}

// One budget's choice of kperf tune --pipeline, recomputed from the document: its finalists, the
// stable rule over their rank times, the held-out verdict, the best uniform chain and the best
// chain approximating the costliest stage alone.
void expect_choice_follows(const nlohmann::json& c, const nlohmann::json& measured,
                           const nlohmann::json& rows,
                           const std::map<std::string, nlohmann::json>& by_key,
                           const std::vector<std::string>& test_inputs,
                           const std::string& costliest, double tie_tolerance) {
  const double budget = c["budget"];
  ASSERT_FALSE(c["chosen"].is_null()) << budget;
  // The finalists: the measured chains within the budget, within 10 % of the fastest's screen
  // time, at most 8.
  std::vector<nlohmann::json> within;
  for (const auto& m : measured)
    if (m["train_error"].get<double>() <= budget) within.push_back(m);
  std::sort(within.begin(), within.end(), [](const auto& a, const auto& b) {
    return a["time_ns"].template get<double>() < b["time_ns"].template get<double>();
  });
  std::vector<std::string> finalists;
  for (const auto& m : within)
    if (m["time_ns"].get<double>() <= 1.1 * within[0]["time_ns"].get<double>() &&
        finalists.size() < 8)
      finalists.push_back(m["key"]);
  ASSERT_EQ(c["finalists"].size(), finalists.size()) << budget;
  // The stable rule over their rank times: within the tie tolerance of the fastest, the lowest
  // error.
  double fastest = INFINITY;
  for (const auto& f : c["finalists"]) {
    EXPECT_NE(std::find(finalists.begin(), finalists.end(), f["key"]), finalists.end());
    EXPECT_NEAR(f["rank_time_ns"].get<double>(), rank_median(rows, f["key"]), 1e-6);
    fastest = std::min(fastest, f["rank_time_ns"].get<double>());
  }
  const auto& chosen = c["chosen"];
  EXPECT_LE(chosen["rank_time_ns"].get<double>(), (1 + tie_tolerance) * fastest);
  for (const auto& f : c["finalists"])
    if (f["rank_time_ns"].get<double>() <= (1 + tie_tolerance) * fastest)
      EXPECT_LE(chosen["train_error"].get<double>(), f["train_error"].get<double>()) << f["key"];
  // The verdict from the chosen chain's held-out rows.
  std::vector<double> held_errors;
  for (const auto& input : test_inputs) {
    held_errors.push_back(by_key.at(on_input(chosen["key"], input))["final_error"]);
    EXPECT_EQ(c["test"]["errors"][input]["error"].get<double>(), held_errors.back());
  }
  EXPECT_EQ(c["test"]["errors"].size(), held_errors.size());
  const double held = linear_percentile(held_errors, 95);
  EXPECT_NEAR(c["test"]["percentile_error"].get<double>(), held, 1e-12);
  EXPECT_EQ(c["holds"].get<bool>(), held <= budget);
  // Uniform: the same variant at both stages but the precision, both reading one stored type.
  const auto& flat = c["best_uniform"]["stages"];
  EXPECT_EQ(approximation_read(flat[0]["variant"]), approximation_read(flat[1]["variant"]));
  for (const auto& s : c["best_costliest_stage_alone"]["stages"])
    if (s["app"] != costliest) EXPECT_EQ(s["variant"], "accurate/none");
}

// kperf tune --pipeline, recomputed from its document: every training error from the error runs'
// rows, the finalists of each budget, the stable rule over their rank times, each held-out
// verdict, the best uniform chain and the best chain approximating the costliest stage alone, and
// a front no measured chain dominates.
TEST(PipelineCli, TuneChoicesFollowFromTheDocument) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  fs::create_directories(dir / "train");
  fs::create_directories(dir / "test");
  for (int i = 0; i < 3; ++i)
    write_npy((dir / "train" / ("t" + std::to_string(i) + ".npy")).string(),
              test::random_grid(40, 40, 60 + i));
  for (int i = 0; i < 2; ++i)
    write_npy((dir / "test" / ("h" + std::to_string(i) + ".npy")).string(),
              test::random_grid(40, 40, 70 + i));
  const std::string common = " --train " + (dir / "train").string() + " --test " +
                             (dir / "test").string() + " --size 40 --out " +
                             (dir / "t.json").string();
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"", "needs --budget"},
           {" --budget 0.1 --cache lukewarm", "--cache lukewarm: expected auto, cold or warm"},
           {" --budget 0.1 --cold --cache warm", "contradict"}}) {
    const Cli bad = kperf_cli("tune --pipeline blur-edges" + args + common, dir);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_NE(bad.err.find(says), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(dir / "t.json")) << args;
  }
  const Cli r = kperf_cli(
      "tune --pipeline blur-edges --budget 0.05,0.5 --stage '1:--schemes rows:2,rows:3 "
      "--precision f32,f16' --stage '2:--schemes rows:2 --precision f32,f16in --wg 8x4' "
      "--fuse none,all --reps 3 --warmup 1 --quiet" +
          common,
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "t.json").string()));
  EXPECT_EQ(doc["kind"], "pipeline-tune");
  EXPECT_EQ(doc["context"]["tune_pipeline"]["cache"], "auto");
  EXPECT_EQ(doc["context"]["tune_pipeline"]["cold"], !env->info().is_cpu());  // auto: cold on GPUs
  const auto& harness = doc["context"]["harness"];
  double phases = 0;
  for (const char* phase : {"build", "screen", "measure", "rank", "held_out"})
    phases += harness["phases_s"][phase].get<double>();
  EXPECT_LE(phases, harness["wall_s"].get<double>() + 1e-6);
  const auto& rows = doc["results"];
  std::map<std::string, nlohmann::json> by_key;  // error runs: screen, measure and test rows
  int screened = 0, fused_ok = 0;
  for (const auto& row : rows) {
    if (row["stage"] != "rank") by_key[row["key"].get<std::string>()] = row;
    screened += row["stage"] == "screen";
    fused_ok += row["stage"] == "screen" && row["fused"] == true && row["status"] == "ok";
  }
  EXPECT_EQ(fused_ok, 3);  // fused: the three f32 first stages before the accurate sobel3
  EXPECT_EQ(screened, doc["context"]["tune_pipeline"]["chains"].get<int>());
  const auto& measured = doc["tune"]["measured"];
  ASSERT_GE(measured.size(), 2u);
  const std::vector<std::string> train = doc["context"]["tune_pipeline"]["train"],
                                 test_inputs = doc["context"]["tune_pipeline"]["test"];
  for (const auto& m : measured) {
    const std::vector<double> errors = m["train_errors"];
    ASSERT_EQ(errors.size(), train.size());
    for (std::size_t i = 0; i < train.size(); ++i)
      EXPECT_EQ(by_key.at(on_input(m["key"], train[i]))["final_error"].get<double>(), errors[i]);
    EXPECT_NEAR(m["train_error"].get<double>(), linear_percentile(errors, 95), 1e-12);
  }
  const std::string costliest = doc["context"]["tune_pipeline"]["costliest_stage"];
  for (const auto& c : doc["tune"]["choices"])
    expect_choice_follows(c, measured, rows, by_key, test_inputs, costliest,
                          doc["context"]["tune_pipeline"]["tie_tolerance"].get<double>());
  for (const auto& f : doc["tune"]["front"])
    for (const auto& m : measured)
      EXPECT_FALSE(m["time_ns"] < f["time_ns"] && m["train_error"] < f["train_error"]) << m["key"];
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

// A fused chain's stages read as the same chain's in separate launches: its label says "fused: "
// (select blocks would otherwise take the two for one rung), its key says "/fused/" once.
TEST(PipelineLabels, AFusedChainIsNotTheSameChainInSeparateLaunches) {
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const Variant acc = test::variant_of("accurate", "nn", "f32");
  Chain plain = {{&g5, acc, {8, 4}}, {&s3, acc, {8, 4}}}, fused = plain;
  for (PipelineStage& s : fused) s.fused = true;
  EXPECT_NE(chain_label(plain), chain_label(fused));
  EXPECT_EQ(chain_label(fused), "fused: " + chain_label(plain));
  EXPECT_EQ(chain_key("p", fused, "in", 8, 8), "p/fused/" + chain_label(plain) + "/in/8x8");
}

using Cli = test::CliRun;

// With fused chains alone, the chain tuner's choice is fused and its table says so; --select
// canary leaves every approximate fused chain off the ladders, each with the reason (the canary
// models stages in separate launches, not the fused kernel's one tile with every stage's halo).
TEST(PipelineCli, FusedChoicesSayFusedAndLeaveTheCanarysLadderWithTheReason) {
  KPERF_REQUIRE_DEVICE();
  test::TempDir dir;
  for (const char* split : {"train", "test"}) {
    fs::create_directories(dir / split);
    for (int i = 0; i < 2; ++i)
      write_npy((dir / split / (std::string(split) + std::to_string(i) + ".npy")).string(),
                test::random_grid(40, 40, 80 + i + (split[1] == 'e' ? 10 : 0)));
  }
  const Cli r = test::kperf_cli(
      "tune --pipeline blur-edges --budget 0.5 --stage '1:--schemes rows:2 --wg 8x4' --stage "
      "'2:--wg 8x4' --fuse all --select static,canary --reps 3 --warmup 1 --quiet --size 40"
      " --train " +
          (dir / "train").string() + " --test " + (dir / "test").string() + " --out " +
          (dir / "t.json").string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "t.json").string()));
  const auto& choice = doc["tune"]["choices"][0];
  ASSERT_FALSE(choice["chosen"].is_null());
  EXPECT_TRUE(choice["chosen"]["fused"].get<bool>());
  EXPECT_NE(r.out.find("fused: "), std::string::npos) << r.out;
  const auto& left_off = choice["select"]["left_off"];
  ASSERT_TRUE(left_off.is_array() && !left_off.empty()) << choice["select"].dump();
  for (const auto& l : left_off) {
    EXPECT_EQ(l["rung"].get<std::string>().rfind("fused: ", 0), 0u) << l.dump();
    EXPECT_NE(l["reason"].get<std::string>().find("fused chain"), std::string::npos) << l.dump();
  }
  for (const auto& rung : choice["select"]["ladder"])
    EXPECT_EQ(rung.get<std::string>().find("rows:2"), std::string::npos) << rung;
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

// An input file runs at its own size unless --size is given (it was resampled to 512x512), and a
// stage whose shapes are not named keeps 16x8 on a CPU.
TEST(PipelineCli, AnInputFileRunsAtItsOwnSize) {
  KPERF_REQUIRE_DEVICE();
  if (!env->info().is_cpu()) GTEST_SKIP() << "the CPU's default shape";
  test::TempDir dir;
  write_npy((dir / "f.npy").string(), test::random_grid(37, 29, 91));
  const test::CliRun r =
      test::kperf_cli("pipeline --pipeline blur-edges --reps 1 --warmup 0 --input " +
                          (dir / "f.npy").string() + " --out " + (dir / "p.json").string(),
                      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file((dir / "p.json").string()));
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& row : doc["results"]) {
    EXPECT_EQ(row["input"]["width"], 37) << row["key"];
    EXPECT_EQ(row["input"]["height"], 29) << row["key"];
    for (const auto& s : row["stages"]) EXPECT_EQ(s["wg"], "16x8") << row["key"];
  }
  EXPECT_TRUE(doc["context"]["pipeline"]["size"].is_null());
}

}  // namespace
}  // namespace kperf
