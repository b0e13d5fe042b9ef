// Device tests of the SPEC 10 axes on the first OpenCL device (PoCL in CI): every load path
// bit-identical to the local tile, output schemes against their CPU model, NaN poisoning of the
// global and image paths (relaxed barriers, launch and loop perforation: axes_more_tests.cpp).
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

// An app's input (hotspot: a synthetic chip and its power) at w x h.
struct AppInput {
  Grid in;
  std::optional<Grid> power;
  const Grid* power_ptr() const { return power ? &*power : nullptr; }
};
AppInput input_for(const AppDescriptor& app, int w, int h, unsigned seed) {
  if (app.takes_images()) return {test::random_grid(w, h, seed), std::nullopt};
  HotspotInput chip = make_synthetic_chip(w, h);
  return {chip.temp, chip.power};
}

// Bit for bit (NaN included): the first element whose bits differ, named under `label`.
::testing::AssertionResult same_bits(const Grid& got, const Grid& want, const std::string& label) {
  if (got.data.size() != want.data.size())
    return ::testing::AssertionFailure()
           << label << ": " << got.data.size() << " elements vs " << want.data.size();
  for (std::size_t i = 0; i < got.data.size(); ++i)
    if (std::memcmp(&got.data[i], &want.data[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << label << " element " << i << ": " << got.data[i] << " vs " << want.data[i];
  return ::testing::AssertionSuccess();
}

// Two builds of the same configurations (one app, every variant x shape): each row of both is
// ok and their outputs are bit for bit the same; *compared counts the pairs.
::testing::AssertionResult same_outputs(const Outcome& got, const Outcome& want,
                                        const AppDescriptor& app,
                                        const std::vector<Variant>& variants,
                                        const std::vector<WorkGroup>& wgs, int* compared) {
  *compared = 0;
  for (const auto& v : variants)
    for (const auto& wg : wgs) {
      const ResultRow* a = got.find(app.name, v, wg);
      const ResultRow* b = want.find(app.name, v, wg);
      if (!a || !b) return ::testing::AssertionFailure() << v.label() << ": a row is missing";
      for (const ResultRow* r : {a, b})
        if (r->status != Status::kOk)
          return ::testing::AssertionFailure()
                 << r->key << ": " << r->status << " " << r->reason << r->build_log;
      const auto same = same_bits(got.outputs.at(a->key), want.outputs.at(b->key), a->key);
      if (!same) return same;
      ++*compared;
    }
  return ::testing::AssertionSuccess();
}

// The same variant on the local tile.
Variant on_local(Variant v) {
  v.load = &find_load("local");
  return v;
}

class LoadPath : public ::testing::TestWithParam<std::string> {};

// Every load path gives the local tile's outputs bit for bit: the global path reads each tap
// from where the tile would take it, with the same reconstruction arithmetic. Each scheme runs
// on one of the three shapes, the same on every load path (all three with KPERF_TEST_FULL=1).
TEST_P(LoadPath, BitIdenticalToTheLocalTile) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 1);
  // 4x2 at vec 4 and 8: the global path's wide row loads (float4 / float8, halves as 8 or 16
  // bytes) against the tile's; py 2 and 3 are whole periods of rows:2 and rows:3, where separable
  // apps pass kept rows only.
  const std::vector<WorkGroup> wgs = {{8, 4}, {5, 3}, {4, 2, 4, 2}, {4, 2, 8, 2}, {4, 2, 4, 3}};
  const auto variants = parse_variants(
      axes("accurate,stencil,rows:2,rows:3,cols:2,cols:3", "nn,li", "local,global,image"));
  const test::ShapeSample sample(
      variants, [](const Variant& v) { return v.label(); }, wgs, 1,
      test::app_index(find_app(GetParam())));
  const int w = 56, h = 29;  // rows 16-byte aligned and a multiple of 8: vec 4 and 8 go wide
  const AppInput input = input_for(app, w, h, 61);
  const int iterations = app.traits.iterated ? 3 : 1;
  const Outcome o =
      test::run_through_runner(*env, {&app}, variants, wgs, input.in, input.power_ptr(), iterations,
                               KPERF_TEST_KERNEL_ROOT, false, {}, "", sample);
  int compared = 0;
  for (const auto& v : variants) {
    if (std::string(v.load_path().name) == "local") continue;
    for (const auto& wg : wgs) {
      if (!sample(v, wg)) continue;
      const ResultRow* row = o.find(app.name, v, wg);
      const ResultRow* local = o.find(app.name, on_local(v), wg);
      ASSERT_TRUE(row && local) << v.label() << " " << v.axes_key();
      if (local->status != Status::kOk) {
        EXPECT_NE(row->status, Status::kOk) << row->key;
        continue;
      }
      if (v.load_path().reads_image && (app.traits.iterated || !env->info().image_support)) {
        EXPECT_EQ(row->status, Status::kNotApplicable) << row->key;
        continue;
      }
      ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
      const Grid& a = o.outputs.at(row->key);
      const Grid& b = o.outputs.at(local->key);
      ASSERT_TRUE(same_bits(a, b, row->key));
      ++compared;
    }
  }
  EXPECT_GE(compared,
            test::full_matrix() ? (app.traits.iterated ? 15 : 30) : (app.traits.iterated ? 5 : 10));
}

INSTANTIATE_TEST_SUITE_P(AllApps, LoadPath, ::testing::ValuesIn(test::all_app_names()));

// Separable apps under rows:k pass only kept window rows (KPERF_IMAGE_KERNEL_ROWS): an nn row
// takes its kept row's pass, bit for bit what passing the rebuilt window gives
// (-DKPERF_RECON_AFTER_ROW_PASS=0); an li row interpolates its kept rows' passes, equal to
// interpolating first up to float rounding. Radius 2 (gaussian5, sobel5: the global path's 4-wide
// side loads) on both buffer load paths, at py 2 and 3, whole periods of rows:2 and rows:3.
TEST(SeparableApps, KeptRowPassesEqualPassingTheRebuiltWindow) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{4, 2, 4, 2}, {4, 2, 8, 3}};
  const auto variants = parse_variants(axes("rows:2,rows:3", "nn,li", "local,global"));
  const auto whole_periods = [](const Variant& v, const WorkGroup& wg) {
    return wg.py % v.skip == 0;
  };
  const int w = 56, h = 29;
  const Grid input = test::random_grid(w, h, 83);
  for (const char* name : {"gaussian5", "sobel5"}) {
    const AppDescriptor& app = find_app(name);
    const Outcome kept =
        test::run_through_runner(*env, {&app}, variants, wgs, input, nullptr, 1,
                                 KPERF_TEST_KERNEL_ROOT, false, {}, "", whole_periods);
    const Outcome first = test::run_through_runner(*env, {&app}, variants, wgs, input, nullptr, 1,
                                                   KPERF_TEST_KERNEL_ROOT, false, {},
                                                   "-DKPERF_RECON_AFTER_ROW_PASS=0", whole_periods);
    int compared = 0;
    for (const auto& v : variants)
      for (const auto& wg : wgs) {
        if (!whole_periods(v, wg)) continue;
        const ResultRow* a = kept.find(app.name, v, wg);
        const ResultRow* b = first.find(app.name, v, wg);
        ASSERT_TRUE(a && b) << v.label();
        ASSERT_EQ(a->status, Status::kOk) << a->key << ": " << a->reason << a->build_log;
        ASSERT_EQ(b->status, Status::kOk) << b->key << ": " << b->reason << b->build_log;
        const Grid& got = kept.outputs.at(a->key);
        const Grid& want = first.outputs.at(b->key);
        if (v.recon == Recon::kNn) {
          ASSERT_TRUE(same_bits(got, want, a->key));
        } else {
          EXPECT_TRUE(test::within_tolerance(got, to_double(want.data, want.width, want.height)))
              << a->key;
        }
        ++compared;
      }
    EXPECT_EQ(compared, 8) << name;  // {rows:2 at py 2, rows:3 at py 3} x nn, li x local, global
  }
}

class OutputScheme : public ::testing::TestWithParam<std::string> {};

// Whether two stored outputs are at most one unit in the last place of the stored type apart
// (floats hold 24 significant bits, halves 11, bfloat16 8).
bool within_one_ulp(float a, float b, const StorageType& stored) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  const int mantissa_bits = stored.bytes == 4 ? 23 : &stored == &storage_type("bf16") ? 7 : 10;
  const double ulp =
      std::ldexp(1.0, std::ilogb(std::max(std::fabs(a), std::fabs(b))) - mantissa_bits);
  return std::fabs(static_cast<double>(a) - b) <= ulp;
}

// Paraprox's row/column/center schemes with nn and li, filled in one launch (fused, and shared
// through local memory) and in two (separate), against the CPU model and against each other:
// fused and separate bit for bit under nn, within one unit in the last place of the stored type
// under li; shared and fused bit for bit under both (the same stores on the same values). Each
// (scheme, reconstruction) pair runs with another input scheme, load path and precision, so every
// value of those axes meets the output schemes; partial periods and blocks at the grid's edges, vec
// 4 and py 2 put several computed lines on a work-item along the scheme's axis, and the nearest
// computed output (and under li the next one) is often another work-group's.
TEST_P(OutputScheme, FusedEqualsSeparateAndTheModel) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 1);
  const std::vector<WorkGroup> wgs = {{8, 4, 4, 2}, {5, 3}};
  struct Others {
    const char *scheme, *load, *precision;
  };
  // Eight combinations, rotated by the app, so that across the apps each meets every pair.
  const Others others[] = {{"accurate", "local", "f32"},  {"stencil", "global", "f16in"},
                           {"rows:2", "image", "f16"},    {"accurate", "global", "f16"},
                           {"rows:2", "local", "f16in"},  {"stencil", "image", "f32"},
                           {"accurate", "local", "bf16"}, {"rows:2", "global", "bf16"}};
  std::vector<Variant> variants;
  std::size_t pair = test::app_index(app);
  for (const char* output : {"rows:2", "cols:2", "cols:3", "center:3"})
    for (const char* recon : {"nn", "li"}) {
      const Others& o = others[pair++ % (sizeof others / sizeof others[0])];
      AxesSpec a = axes(o.scheme, "li", o.load, output, recon);
      a.precisions = o.precision;
      a.output_fills = "fused,shared,separate";
      for (const auto& v : parse_variants(a)) variants.push_back(v);
    }
  // 52 columns: whole float4 rows for the aligned stores along x, and a final partial period
  // under cols:3 and center:3; 37 rows leave partial periods and blocks along y.
  const int w = 52, h = 37;
  const AppInput input = input_for(app, w, h, 71);
  const int iterations = app.traits.iterated ? 3 : 1;
  const Outcome o = test::run_through_runner(*env, {&app}, variants, wgs, input.in,
                                             input.power_ptr(), iterations);
  const GridD in_d = to_double(input.in.data, w, h);
  GridD pw;
  if (input.power) pw = to_double(input.power->data, w, h);
  int checked = 0, compared = 0, shared_compared = 0;
  for (const auto& v : variants)
    for (const auto& wg : wgs) {
      const ResultRow* row = o.find(app.name, v, wg);
      ASSERT_NE(row, nullptr);
      EXPECT_EQ(row->output_fill, v.fill().name);
      if (const auto verdict = check_launch(app, v, wg, env->info())) {
        EXPECT_EQ(row->status, verdict->status) << row->key;
        continue;
      }
      if (row->status == Status::kNotApplicable && v.load_path().reads_image)
        continue;  // PoCL's halves
      ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
      const GridD model = model_run(app, v, wg, in_d, input.power ? &pw : nullptr, iterations);
      EXPECT_TRUE(test::within_tolerance(o.outputs.at(row->key), model, v.precision_info().out))
          << row->key;
      ++checked;
      if (std::string(v.fill().name) != "fused") continue;
      const Grid& a = o.outputs.at(row->key);
      const StorageType& stored = *v.precision_info().out;
      for (const char* fill : {"separate", "shared"}) {
        Variant other_fill = v;
        other_fill.output_fill = &find_output_fill(fill);
        const ResultRow* other = o.find(app.name, other_fill, wg);
        ASSERT_TRUE(other && other->ok()) << other_fill.axes_key() << " beside " << row->key;
        const Grid& b = o.outputs.at(other->key);
        const bool bitwise = v.output_recon == Recon::kNn || std::string(fill) == "shared";
        if (bitwise) ASSERT_TRUE(same_bits(b, a, other->key + " vs fused"));
        for (std::size_t i = 0; !bitwise && i < a.data.size(); ++i)
          ASSERT_TRUE(within_one_ulp(a.data[i], b.data[i], stored))
              << other->key << " element " << i << ": " << b.data[i] << " vs fused " << a.data[i];
        ++(std::string(fill) == "shared" ? shared_compared : compared);
      }
    }
  // Radius 0 takes no stencil, hotspot neither images nor f16in; PoCL reads half images wrong.
  const int expected = app.traits.iterated ? 24 : app.radius == 0 ? 30 : 42;
  EXPECT_GE(checked, expected);
  EXPECT_GE(compared, expected / 3);
  EXPECT_GE(shared_compared, expected / 3);
}

INSTANTIATE_TEST_SUITE_P(AllApps, OutputScheme, ::testing::ValuesIn(test::all_app_names()));

// The rule for an input scheme under an output scheme: the input scheme perforates the tile of
// the block of outputs a work-group accounts for (computed or filled), so the pair gives the
// output scheme applied to the input scheme's outputs at the launch shape with that block (here
// 8 x 4 work-items under rows:2 and 8 x 4 with two rows each, both 8 x 8), in every fill.
TEST(OutputScheme, InputSchemeIsAppliedToTheBlockThenTheOutputScheme) {
  KPERF_REQUIRE_DEVICE();
  const Grid in = test::random_grid(40, 29, 17);
  for (const char* name : {"gaussian3", "median"}) {
    const AppDescriptor& app = find_app(name);
    for (const char* scheme : {"stencil", "rows:2"}) {
      AxesSpec pair = axes(scheme, "nn", "local", "rows:2", "nn,li");
      pair.output_fills = "fused,shared,separate";
      std::vector<Variant> variants = parse_variants(pair);
      const Variant alone = parse_variants(axes(scheme, "nn", "local"))[0];
      const Outcome both = test::run_through_runner(*env, {&app}, variants, {{8, 4}}, in);
      const Outcome first = test::run_through_runner(*env, {&app}, {alone}, {{8, 4, 1, 2}}, in);
      ASSERT_TRUE(first.rows.size() == 1 && first.rows[0].ok());
      const Grid& inner = first.outputs.at(first.rows[0].key);
      for (const auto& v : variants) {
        const ResultRow* row = both.find(app.name, v, {8, 4});
        ASSERT_TRUE(row && row->ok()) << v.label() << " " << v.axes_key();
        const Grid& got = both.outputs.at(row->key);
        for (int y = 0; y < in.height; ++y) {
          const OutputSource src = output_source(y, in.height, 2, v.output_recon);
          for (int x = 0; x < in.width; ++x) {
            const float a = inner.at(src.a, x), b = inner.at(src.b, x);
            const float expected =
                src.a == src.b ? a : std::fma(static_cast<float>(src.w), b - a, a);
            if (v.output_recon == Recon::kNn)
              ASSERT_EQ(got.at(y, x), expected) << row->key << " at " << y << "," << x;
            else
              ASSERT_TRUE(within_one_ulp(got.at(y, x), expected, storage_type("f32")))
                  << row->key << " at " << y << "," << x << ": " << got.at(y, x) << " vs "
                  << expected;
          }
        }
      }
    }
  }
}

// Under an output scheme along x on the accurate input a work-item's computed columns share one
// window (KPERF_SHARED_X_WINDOW), whose slices hold the values each computed output's own window
// reads: the outputs are bit for bit those of one gather per window, on every load path, with
// aligned 4-element loads inside the grid (regions of 4, 8 and 12 columns), element by element
// at its edges and for regions of 6 columns, and radius 1 and 2. Each build states which gather
// it compiled, so the comparison cannot pass by building the same program twice.
TEST(OutputScheme, SharedColumnWindowEqualsOneWindowPerComputedColumn) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{4, 2, 2, 2}, {4, 2, 4, 1}};
  const std::vector<Variant> variants =
      parse_variants(axes("accurate", "nn", "local,global", "cols:2,cols:3,center:3", "nn,li"));
  const int w = 56, h = 29;
  const Grid input = test::random_grid(w, h, 89);
  for (const char* name : test::full_matrix() ? std::vector<const char*>{"median", "gaussian5"}
                                              : std::vector<const char*>{"median"}) {
    const AppDescriptor& app = find_app(name);
    const Outcome shared = test::run_through_runner(*env, {&app}, variants, wgs, input, nullptr, 1,
                                                    KPERF_TEST_KERNEL_ROOT, false, {},
                                                    "-DKPERF_EXPECT_SHARED_X_WINDOW=1");
    const Outcome apart = test::run_through_runner(
        *env, {&app}, variants, wgs, input, nullptr, 1, KPERF_TEST_KERNEL_ROOT, false, {},
        "-DKPERF_SHARED_X_WINDOW=0 -DKPERF_EXPECT_SHARED_X_WINDOW=0");
    int compared = 0;
    ASSERT_TRUE(same_outputs(shared, apart, app, variants, wgs, &compared));
    EXPECT_EQ(compared, 24) << name;  // 3 output schemes x nn, li x 2 load paths x 2 shapes
  }
}

// Under an output scheme along y on the global load path and the accurate input a work-item's
// computed rows share one window (KPERF_SHARED_Y_WINDOW), whose slices hold the values each
// computed row's own window reads: the outputs are bit for bit those of one gather per window,
// in every fill, with wide row loads inside the grid (VEC 4) and element by element at its
// edges (16 columns a group, 40 in the grid), for windows that overlap (rows:2) and windows that
// touch (rows:3 at radius 1), radius 1 and 2, and hotspot, which reads its power grid at the
// computed rows. Each build states which gather it compiled, so the comparison cannot pass by
// building one program twice.
TEST(OutputScheme, SharedRowWindowEqualsOneWindowPerComputedRow) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{4, 3, 4, 2}};
  AxesSpec spec = axes("accurate", "nn", "global", "rows:2,rows:3", "nn,li");
  spec.output_fills = "fused,shared,separate";
  const std::vector<Variant> variants = parse_variants(spec);
  const int w = 40, h = 37;
  for (const char* name :
       test::full_matrix() ? std::vector<const char*>{"gaussian3", "median", "gaussian5", "hotspot"}
                           : std::vector<const char*>{"gaussian5", "hotspot"}) {
    const AppDescriptor& app = find_app(name);
    const AppInput input = input_for(app, w, h, 61);
    const int iterations = app.traits.iterated ? 2 : 1;
    const Outcome shared = test::run_through_runner(
        *env, {&app}, variants, wgs, input.in, input.power_ptr(), iterations,
        KPERF_TEST_KERNEL_ROOT, false, {}, "-DKPERF_EXPECT_SHARED_Y_WINDOW=1");
    const Outcome apart =
        test::run_through_runner(*env, {&app}, variants, wgs, input.in, input.power_ptr(),
                                 iterations, KPERF_TEST_KERNEL_ROOT, false, {},
                                 "-DKPERF_SHARED_Y_WINDOW=0 -DKPERF_EXPECT_SHARED_Y_WINDOW=0");
    int compared = 0;
    ASSERT_TRUE(same_outputs(shared, apart, app, variants, wgs, &compared));
    EXPECT_EQ(compared, 12) << name;  // 2 output schemes x nn, li x 3 fills
  }
}

// On the accurate input the shared fill overlaps neighbouring groups' blocks so that no
// work-item computes a line past its own: under li along y by one computed row (the group's last
// work-items' last row is the next block's first, read to interpolate and stored by the next
// group), and along x, where the fill reads the neighbours' computed columns, by whole
// work-items (the first and last compute those columns and store nothing). The outputs stay the
// fused fill's bit for bit, on both load paths: blocks of two computed rows (each group owns one)
// and six, groups that own one work-item along x, aligned runs (vector loads and stores) and
// unaligned ones, partial blocks at the grid's ends, and both axes at once under center:3. A
// block of one computed row, or a group with no work-item to spare along x, keeps computing past
// its block. Hotspot reads its power grid at the outputs' coordinates, which move with the
// blocks, and iterates.
TEST(OutputScheme, SharedFillOverlapsBlocksAndEqualsTheFusedFill) {
  KPERF_REQUIRE_DEVICE();
  const std::vector<WorkGroup> wgs = {{8, 2, 2, 1}, {4, 3, 4, 2}, {2, 1, 1, 1}};
  AxesSpec li =
      axes("accurate", "nn", "local,global", "rows:2,rows:3,cols:2,cols:3,center:3", "li");
  AxesSpec nn = axes("accurate", "nn", "local,global", "cols:2", "nn");
  li.output_fills = nn.output_fills = "fused,shared";
  std::vector<Variant> variants = parse_variants(li);
  for (const Variant& v : parse_variants(nn)) variants.push_back(v);
  const int w = 28, h = 31;
  for (const char* name : test::full_matrix() ? std::vector<const char*>{"median", "hotspot"}
                                              : std::vector<const char*>{"median"}) {
    const AppDescriptor& app = find_app(name);
    const AppInput input = input_for(app, w, h, 97);
    const int iterations = app.traits.iterated ? 3 : 1;
    const Outcome o = test::run_through_runner(*env, {&app}, variants, wgs, input.in,
                                               input.power_ptr(), iterations);
    int along_y = 0, along_x = 0, compared = 0;
    for (const auto& v : variants) {
      if (std::string(v.fill().name) != "shared") continue;
      Variant fused = v;
      fused.output_fill = &find_output_fill("fused");
      for (const auto& wg : wgs) {
        const bool li_fill = v.output_recon == Recon::kLi;
        const bool y = li_fill && v.output.ky() > 1 && wg.y * wg.py > 1;
        const int sides = v.output.kx() == 1 ? 0 : 1 + (li_fill && v.output.kx() > 2);
        const bool x = sides > 0 && wg.x > sides;
        ASSERT_EQ(blocks_overlap_y(v, wg), y) << v.label();
        ASSERT_EQ(blocks_overlap_x(v, wg), x) << v.label();
        ASSERT_FALSE(blocks_overlap_y(fused, wg) || blocks_overlap_x(fused, wg)) << v.label();
        const std::string options = shape_build_options(v, wg);
        ASSERT_EQ(options.find("-DKPERF_OVERLAP_Y=1") != std::string::npos, y) << options;
        ASSERT_EQ(options.find("-DKPERF_OVERLAP_X=1") != std::string::npos, x) << options;
        const ResultRow* got = o.find(app.name, v, wg);
        const ResultRow* want = o.find(app.name, fused, wg);
        ASSERT_TRUE(got && want) << v.label();
        ASSERT_EQ(got->status, Status::kOk) << got->key << ": " << got->reason << got->build_log;
        ASSERT_EQ(want->status, Status::kOk)
            << want->key << ": " << want->reason << want->build_log;
        const Grid& g = o.outputs.at(got->key);
        const Grid& f = o.outputs.at(want->key);
        ASSERT_TRUE(same_bits(g, f, got->key + " vs fused"));
        along_y += y;
        along_x += x;
        ++compared;
      }
    }
    EXPECT_EQ(compared, 36) << name;  // 6 output schemes x 2 load paths x 3 shapes
    EXPECT_EQ(along_y, 12) << name;   // rows:2, rows:3, center:3 li x 2 paths x 2 shapes
    EXPECT_EQ(along_x, 20) << name;   // cols:2 nn, li x 3 shapes; cols:3, center:3 li x 2
  }
}

// Under an output scheme along y the accurate kernel reads only the windows of computed rows
// (rows:3 of inversion: one row in three): the others, poisoned with NaN, change no output on
// any load path, in every fill.
TEST(OutputScheme, RowsOutsideComputedWindowsAreNeverRead) {
  KPERF_REQUIRE_DEVICE();
  const int w = 48, h = 40;
  const Grid clean_in = test::random_grid(w, h, 23);
  for (const char* name : test::full_matrix() ? std::vector<const char*>{"inversion", "gaussian3"}
                                              : std::vector<const char*>{"inversion"}) {
    const AppDescriptor& app = find_app(name);
    AxesSpec a = axes("accurate", "nn", "local,global,image", "rows:3,rows:4", "nn,li");
    a.output_fills = "fused,shared,separate";
    const auto variants = parse_variants(a);
    const std::vector<WorkGroup> wgs = {{8, 2, 4, 2}};
    const Outcome clean = test::run_through_runner(*env, {&app}, variants, wgs, clean_in);
    int poisoned_rows = 0;
    for (const auto& v : variants) {
      const ResultRow* a_row = clean.find(app.name, v, wgs[0]);
      ASSERT_TRUE(a_row && a_row->ok()) << v.axes_key() << ": " << (a_row ? a_row->reason : "");
      const auto read = elements_read_by_any(v, app.radius, wgs[0], w, h);
      Grid poisoned = clean_in;
      for (std::size_t i = 0; i < read.size(); ++i)
        if (!read[i]) poisoned.data[i] = std::numeric_limits<float>::quiet_NaN();
      for (int y = 0; y < h; ++y) poisoned_rows += !read[static_cast<std::size_t>(y) * w];
      const Outcome dirty = test::run_through_runner(*env, {&app}, {v}, wgs, poisoned);
      const Grid& ca = clean.outputs.at(a_row->key);
      const Grid& cb = dirty.outputs.at(dirty.rows.at(0).key);
      for (std::size_t i = 0; i < ca.data.size(); ++i)
        ASSERT_EQ(ca.data[i], cb.data[i]) << a_row->key << " element " << i;
    }
    // rows:3 of inversion reads 14 of 40 rows; gaussian3's windows leave one row in four unread.
    EXPECT_GE(poisoned_rows, std::string(name) == "inversion" ? 12 * 26 : 12 * 8) << name;
  }
}

// Output schemes are approximations: on a non-constant input they change outputs, and nn
// copies computed outputs exactly (every output value is one of the computed ones).
TEST(OutputScheme, NearestNeighbourCopiesComputedOutputs) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("gaussian3");
  const Grid in = test::random_grid(40, 28, 5);  // rows 26, 27: a period without its line
  const Outcome o = test::run_through_runner(
      *env, {&app}, parse_variants(axes("accurate", "nn", "local", "none,rows:3", "nn")), {{8, 4}},
      in);
  ASSERT_EQ(o.rows.size(), 2u);
  const Grid& exact = o.outputs.at(o.rows[0].key);
  const Grid& approx = o.outputs.at(o.rows[1].key);
  int differ = 0;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      // Row y takes computed row 3 * (y / 3) + 1, or the last one (25) past it.
      const int source = std::min(3 * (y / 3) + 1, 25);
      ASSERT_EQ(approx.at(y, x), exact.at(source, x)) << y << "," << x;
      differ += approx.at(y, x) != exact.at(y, x);
    }
  EXPECT_GT(differ, in.width * in.height / 2);
}

// Rows 16-byte aligned: the fill kernel of rows:K moves float4s; same values as the model.
TEST(OutputScheme, AlignedRowsFillMatchesTheModel) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("gaussian3");
  const Grid in = test::random_grid(48, 29, 7);
  const auto variants =
      parse_variants(axes("accurate,rows:2", "nn", "local", "rows:2,rows:3,rows:4", "nn,li"));
  const Outcome o = test::run_through_runner(*env, {&app}, variants, {{8, 4}, {4, 2, 4, 1}}, in);
  const GridD in_d = to_double(in.data, in.width, in.height);
  int checked = 0;
  for (const auto& r : o.rows) {
    ASSERT_EQ(r.status, Status::kOk) << r.key << ": " << r.reason << r.build_log;
    for (const auto& v : variants)
      if (r.axes == v.axes_key() && r.scheme == v.canonical()) {
        EXPECT_TRUE(test::within_tolerance(
            o.outputs.at(r.key),
            model_run(app, v, {r.wg_x, r.wg_y, r.vec, r.py}, in_d, nullptr, 1)))
            << r.key;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 24);
}

class PoisonLoadPaths : public ::testing::TestWithParam<std::string> {};

// Elements an input scheme skips, poisoned with NaN, leave the global and image paths' outputs
// unchanged: neither path ever reads them.
TEST_P(PoisonLoadPaths, SkippedElementsAreNeverRead) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 0);
  const int w = 64, h = 40;
  const AppInput input = input_for(app, w, h, 81);
  const auto variants =
      parse_variants(axes("rows:2,rows:3,cols:2,cols:4", "nn,li", "global,image"));
  const WorkGroup wg{8, 8};
  const Outcome clean =
      test::run_through_runner(*env, {&app}, variants, {wg}, input.in, input.power_ptr(), 1);
  int checked = 0;
  for (const auto& v : variants) {
    if (check_launch(app, v, wg, env->info())) continue;
    const auto read = elements_read_by_any(v, app.radius, wg, w, h);
    Grid poisoned = input.in;
    for (std::size_t i = 0; i < read.size(); ++i)
      if (!read[i]) poisoned.data[i] = std::numeric_limits<float>::quiet_NaN();
    const Outcome dirty =
        test::run_through_runner(*env, {&app}, {v}, {wg}, poisoned, input.power_ptr(), 1);
    const ResultRow* a = clean.find(app.name, v, wg);
    const ResultRow* b = dirty.find(app.name, v, wg);
    ASSERT_TRUE(a && b && a->ok() && b->ok()) << v.label() << " " << v.axes_key();
    const Grid& ca = clean.outputs.at(a->key);
    const Grid& cb = dirty.outputs.at(b->key);
    for (std::size_t i = 0; i < ca.data.size(); ++i) {
      ASSERT_TRUE(std::isfinite(cb.data[i])) << b->key << " element " << i;
      ASSERT_EQ(ca.data[i], cb.data[i]) << b->key << " element " << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, app.traits.iterated ? 8 : 16);
}

INSTANTIATE_TEST_SUITE_P(AllApps, PoisonLoadPaths, ::testing::ValuesIn(test::all_app_names()));

// With one work-item per group there is nobody to race with: a relaxed kernel gives exactly the
// model's outputs. Larger groups run, and every relaxed row keeps five downloads' errors.
}  // namespace
}  // namespace kperf
