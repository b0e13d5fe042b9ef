// Fused chains (kperf pipeline --fuse all): one launch computing a chain of apps, held to the
// unfused chain and the chained references (accurate), to the CPU model of its stages over the
// fused tile (perforated, f16, three stages, one app twice, user apps), to NaN poisoning of what it
// skips, to the canary bands around its output, and to not_applicable rows for what it cannot take.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>

#include "fused_program.hpp"
#include "pipeline_test_support.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;
using test::as_grid;
using test::ChainBench;
using test::test_options;
using test::variant_of;

// Every stage of `chain` in one fused launch at the last stage's shape.
std::vector<PipelineStage> fused(std::vector<PipelineStage> chain) {
  for (PipelineStage& s : chain) {
    s.wg = chain.back().wg;
    s.fused = true;
  }
  return chain;
}

// The accurate fused chain equals the unfused one (each stage at the fused launch's shape, so
// both compute every float the same way) and the chained CPU references.
TEST(FusedChain, AccurateEqualsTheUnfusedChainAndTheChainedReferences) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 91);
  ChainBench runner(*env, test_options(1));
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median");
  const Variant accurate = variant_of("accurate", "nn", "f32");
  for (const WorkGroup wg : {WorkGroup{8, 4, 4, 2}, WorkGroup{16, 2, 1, 3}})
    for (const auto* first : {&g5, &median}) {
      const std::vector<PipelineStage> chain = {{first, accurate, wg}, {&s3, accurate, wg}};
      const Measurement plain = runner.run(chain, input), one = runner.run(fused(chain), input);
      ASSERT_TRUE(plain.ok() && one.ok()) << first->name << ": " << plain.reason << one.reason;
      EXPECT_EQ(one.stages[0].output.size(), 0u) << "stage 1's outputs stay in local memory";
      EXPECT_EQ(one.stages[1].output, plain.stages[1].output) << first->name;
      EXPECT_TRUE(test::within_tolerance(as_grid(one.stages[1].output, w, h),
                                         chain_truth({first, &s3}, input).back()))
          << first->name;
    }
}

struct FusedCase {
  const char* name;
  std::vector<PipelineStage> stages;  // fused
  bool small_integers = false;        // the input (an f16 intermediate)
};

std::vector<FusedCase> fused_cases() {
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3"),
                      &median = find_app("median"), &g3 = find_app("gaussian3");
  const WorkGroup wide{8, 4, 4, 2}, narrow{16, 2, 1, 3}, odd{4, 8, 2, 1};
  const Variant acc = variant_of("accurate", "nn", "f32");
  return {
      {"rows:2/nn", fused({{&g5, variant_of("rows:2", "nn", "f32"), wide}, {&s3, acc, wide}})},
      {"rows:3/li", fused({{&g5, variant_of("rows:3", "li", "f32"), narrow}, {&s3, acc, narrow}})},
      {"cols:2/li", fused({{&median, variant_of("cols:2", "li", "f32"), wide}, {&s3, acc, wide}})},
      {"cols:3/nn", fused({{&g5, variant_of("cols:3", "nn", "f32"), odd}, {&s3, acc, odd}})},
      {"stencil", fused({{&median, variant_of("stencil", "nn", "f32"), odd}, {&s3, acc, odd}})},
      {"f16 in, f16 between, f16 out",
       fused({{&g5, variant_of("rows:2", "li", "f16"), wide},
              {&s3, variant_of("accurate", "nn", "f16"), wide}}),
       true},
      {"f16 in, f32 between",
       fused({{&median, variant_of("cols:2", "nn", "f16in"), narrow}, {&s3, acc, narrow}}), true},
      {"three stages", fused({{&g3, variant_of("rows:2", "li", "f32"), wide},
                              {&median, acc, wide},
                              {&s3, acc, wide}})},
      {"one app twice",
       fused({{&s3, variant_of("stencil", "nn", "f32"), narrow}, {&s3, acc, narrow}})},
  };
}

// A perforated fused chain's output equals the CPU model of its stages chained over the fused
// tile (fused_model.hpp): each stage's outputs over the block and the later stages' halo, the
// first stage's input scheme applied to the tile with every stage's radius as its halo.
TEST(FusedChain, PerforatedEqualsTheChainedModelsOverTheFusedTile) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  ChainBench runner(*env, test_options(1));
  for (const FusedCase& c : fused_cases()) {
    const Grid input =
        c.small_integers ? test::small_integers(w, h, 92) : test::random_grid(w, h, 92);
    const Measurement out = runner.run(c.stages, input);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.reason << "\n" << out.stages.back().build_log;
    const Grid got = as_grid(out.stages.back().output, w, h);
    EXPECT_TRUE(test::within_tolerance(got, fused_chain_model(c.stages, input),
                                       c.stages.back().variant.precision_info().out))
        << c.name;
  }
}

// With every input element the fused tile does not load poisoned with NaN, the output is the
// clean run's, bit for bit.
TEST(FusedChain, NoStageReadsWhatItSkips) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 93);
  CoreOptions opt = test_options(1);
  ChainBench clean(*env, opt);
  opt.poison_unread = true;
  ChainBench dirty(*env, opt);
  long skipped = 0;
  for (const FusedCase& c : fused_cases()) {
    if (c.stages[0].variant.is_accurate()) continue;
    const Measurement a = clean.run(c.stages, input), b = dirty.run(c.stages, input);
    ASSERT_TRUE(a.ok() && b.ok()) << c.name << ": " << a.reason << b.reason;
    const auto read = elements_read_by_any(c.stages[0].variant, fused_tile_halo(c.stages),
                                           c.stages.back().wg, w, h);
    skipped += std::count(read.begin(), read.end(), 0);
    EXPECT_EQ(a.stages.back().output, b.stages.back().output) << c.name;
  }
  EXPECT_GT(skipped, 2 * w * h);  // rows:k and cols:k skip lines of the grid
}

// What a fused chain cannot take is a not_applicable row naming the stage and why.
TEST(FusedChain, ChainsThatCannotFuseAreRowsThatSaySo) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const WorkGroup wg{8, 4};
  const Variant acc = variant_of("accurate", "nn", "f32");
  AxesSpec relaxed;
  relaxed.kernel["relax"] = "skip";
  ChainBench runner(*env, test_options(1));
  const Grid input = test::random_grid(32, 32, 94);
  const std::tuple<Variant, Variant, int, const char*> cases[] = {
      {acc, variant_of("rows:2", "nn", "f32"), 2, "an input scheme has no reads to skip"},
      {variant_of("accurate", "nn", "f32", "global"), acc, 1, "global load path"},
      {acc, variant_of("accurate", "nn", "f32", "local", "rows:2"), 2, "output schemes"},
      {variant_of("rows:2", "nn", "f32", "local", "none", "host"), acc, 1, "host perforation"},
      {parse_variants(relaxed).front(), acc, 1, "relaxed barrier"},
      {acc, variant_of("accurate", "nn", "f16in"), 2, "stores f32 and this stage reads f16"},
      {variant_of("accurate", "nn", "f16"), variant_of("accurate", "nn", "bf16"), 2,
       "stores f16 and this stage reads bf16"}};
  for (const auto& [first, second, stage, says] : cases) {
    const Measurement out = runner.run(fused({{&g5, first, wg}, {&s3, second, wg}}), input);
    EXPECT_EQ(out.status, Status::kNotApplicable) << says;
    EXPECT_EQ(out.failed_stage, stage - 1) << says;
    EXPECT_NE(out.reason.find("stage " + std::to_string(stage)), std::string::npos) << out.reason;
    EXPECT_NE(out.reason.find(says), std::string::npos) << out.reason;
  }
}

// User apps are stages of a fused chain like built-ins: box5 (perforated) then unsharp, whose
// parameter macro and names the program keeps apart per stage, against the model evaluated by
// their own fp64 truth kernels.
TEST(FusedChain, UserAppsAreStages) {
  KPERF_REQUIRE_DEVICE();
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  const std::string apps = std::string(KPERF_TEST_SOURCE_DIR) + "/examples/apps/";
  const AppDescriptor &box5 = add_user_app(apps + "box5.cl"),
                      &unsharp = add_user_app(apps + "unsharp.cl");
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 95);
  TruthSource truth(env, KPERF_TEST_KERNEL_ROOT);
  ChainBench runner(*env, test_options(1));
  const WorkGroup wg{8, 4, 4, 2};
  const auto chain = fused({{&box5, variant_of("rows:2", "li", "f32"), wg},
                            {&unsharp, variant_of("accurate", "nn", "f32"), wg}});
  const Measurement out = runner.run(chain, input);
  ASSERT_TRUE(out.ok()) << out.reason << "\n" << out.stages.back().build_log;
  EXPECT_TRUE(test::within_tolerance(
      as_grid(out.stages.back().output, w, h),
      fused_chain_model(chain, input, {}, {truth.evaluator(box5), truth.evaluator(unsharp)})));
}

// A launch that writes past its output buffer overwrites the canary band around it: the chain is
// run_failed, fused (either design) or not (a kernel tree whose sobel3 file adds the stray store to
// the stores).
TEST(FusedChain, WritesPastTheOutputTripTheCanary) {
  KPERF_REQUIRE_DEVICE();
  TempDir dir;
  const fs::path root = dir / "tree";
  fs::create_directories(root);
  for (const char* sub : {"kernels", "schemes"})
    fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / sub, root / sub, fs::copy_options::recursive);
  std::ofstream(root / "schemes" / "stray_store.cl") << R"(
#define KPERF_STRAY(out, width, height) \
  if (get_global_id(0) == 0 && get_global_id(1) == 0) (out)[(width) * (height) + 3] = 1.0f
#undef KPERF_STORE
#define KPERF_STORE(out, width, height, values) \
  kperf_store(out, width, height, values);      \
  KPERF_STRAY(out, width, height)
#define kperf_store_at(out, width, height, y0, x0, values) \
  kperf_store_at(out, width, height, y0, x0, values);      \
  KPERF_STRAY(out, width, height)
)";
  const std::string sobel3 = read_file((root / "kernels" / "sobel3.cl").string());
  std::ofstream(root / "kernels" / "sobel3.cl")
      << sobel3.substr(0, sobel3.rfind("KPERF_IMAGE_KERNEL_ROWS"))
      << "#include \"stray_store.cl\"\n"
      << sobel3.substr(sobel3.rfind("KPERF_IMAGE_KERNEL_ROWS"));
  CoreOptions opt = test_options(1);
  opt.kernel_root = root.string();
  ChainBench runner(*env, opt);
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const Variant acc = variant_of("accurate", "nn", "f32");
  const std::vector<PipelineStage> chain = {{&g5, acc, {8, 4}}, {&s3, acc, {8, 4}}};
  const Grid input = test::random_grid(32, 24, 96);
  const Measurement plain = runner.run(chain, input), one = runner.run(fused(chain), input);
  EXPECT_EQ(plain.status, Status::kRunFailed) << plain.reason;
  EXPECT_EQ(plain.reason,
            "stage 2 (sobel3): kernel wrote outside its output buffer (canary band overwritten)");
  EXPECT_EQ(one.status, Status::kRunFailed) << one.reason << one.stages.back().build_log;
  EXPECT_EQ(one.reason,
            "the fused kernel: kernel wrote outside its output buffer (canary band overwritten)");
  // The rolling design (--fuse-rows) stores through the same function.
  std::vector<PipelineStage> rolling = fused(chain);
  for (PipelineStage& s : rolling) s.fuse_rows = 5;
  const Measurement rolled = runner.run(rolling, input);
  EXPECT_EQ(rolled.status, Status::kRunFailed) << rolled.reason << rolled.stages.back().build_log;
  EXPECT_EQ(rolled.reason, one.reason);
}

// How the work-items split an earlier stage's region into chunks changes no output: one output
// per chunk, or tall chunks as wide as two float4s, give the default chunks' outputs bit for bit;
// a chunk larger than the region does not build.
TEST(FusedChain, ChunkShapesChangeNoOutput) {
  KPERF_REQUIRE_DEVICE();
  const int w = 61, h = 47;
  const Grid input = test::random_grid(w, h, 97);
  const AppDescriptor &g5 = find_app("gaussian5"), &s3 = find_app("sobel3");
  const WorkGroup wg{8, 4, 4, 2};
  const auto chain = fused({{&g5, variant_of("rows:2", "li", "f32"), wg},
                            {&s3, variant_of("accurate", "nn", "f32"), wg}});
  ChainBench plain(*env, test_options(1));
  const Measurement base = plain.run(chain, input);
  ASSERT_TRUE(base.ok()) << base.reason;
  for (const char* chunk : {"-DKPERF_FUSE_CHUNK_VEC_1=1 -DKPERF_FUSE_CHUNK_PY_1=1",
                            "-DKPERF_FUSE_CHUNK_VEC_1=8 -DKPERF_FUSE_CHUNK_PY_1=5"}) {
    CoreOptions opt = test_options(1);
    opt.extra_build_options = chunk;
    ChainBench runner(*env, opt);
    const Measurement out = runner.run(chain, input);
    ASSERT_TRUE(out.ok()) << chunk << ": " << out.reason << out.stages.back().build_log;
    EXPECT_EQ(out.stages.back().output, base.stages.back().output) << chunk;
  }
  CoreOptions opt = test_options(1);
  opt.extra_build_options = "-DKPERF_FUSE_CHUNK_PY_1=11";  // the region is 8 + 2 rows
  ChainBench runner(*env, opt);
  EXPECT_EQ(runner.run(chain, input).status, Status::kBuildFailed);
}

// The names a fused program prefixes per stage: an app's own file-scope functions, variables and
// types, never its macros, the contract's names, keywords or what comments and strings hold.
TEST(FusedProgram, FileScopeNamesAreTheAppsOwn) {
  const std::string text = R"(// helper(1) in a comment
#define SCALE(x) ((x) * 2.0f)
#define LIMIT 4
#include "kperf_tile.cl"
/* table[3] = {1} */
__constant float table[3] = {1.0f, 2.0f, 3.0f};
typedef struct { float a; } pair_t;
float first, second;
inline float helper(const float* c) { return SCALE(c[0]) + sizeof(float) + LIMIT; }
__attribute__((always_inline)) inline float other(float x) { return helper(&x); }
inline float kperf_not_mine(float x) { return x; }
KPERF_IMAGE_KERNEL(helper)
)";
  EXPECT_EQ(file_scope_names(text),
            (std::vector<std::string>{"first", "helper", "other", "pair_t", "second", "table"}));
  EXPECT_EQ(defined_macros(text), (std::vector<std::string>{"LIMIT", "SCALE"}));
  const std::string median = read_file(std::string(KPERF_TEST_KERNEL_ROOT) + "/kernels/median.cl");
  for (const std::string& name : file_scope_names(median))
    EXPECT_EQ(name.rfind("median_", 0), 0u) << name;
}

}  // namespace
}  // namespace kperf
