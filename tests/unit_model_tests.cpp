// Host unit tests of what is measured: the structural and kernel axes' registries, metrics,
// synthetic inputs, the CPU scheme model, launch validation, hotspot and bilateral by hand, gzip.
// No OpenCL device needed.
#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "app_manifest.hpp"
#include "apps.hpp"
#include "cl_env.hpp"
#include "cli.hpp"
#include "energy.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "launch_checks.hpp"
#include "metrics.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "schemes.hpp"
#include "shard.hpp"
#include "stats.hpp"
#include "structural_axes.hpp"
#include "synthetic.hpp"
#include "test_support.hpp"
#include "tune.hpp"

namespace kperf {
namespace {

using test::timed_row;

// --- metrics --------------------------------------------------------------------------------
// Every layer reads a kernel axis from its descriptor: the variant list, the result key, the build
// options, the verdict for apps it does not apply to, the row field and the tuner's exactness. A
// new descriptor is held to all of it without a new test.
// Every structural axis drives every layer that reads it: for a variant at a non-default value
// of that axis alone, its key segment is the variant's whole axes key, its row fields hold the
// value and survive JSON, its family is the variant's, and at the default it adds nothing.
TEST(StructuralAxes, EveryLayerReadsTheRegistry) {
  const Variant base = parse_scheme("accurate");
  std::map<std::string, Variant> changed;
  changed["load"] = base;
  changed["load"].load = &find_load("global");
  changed["output"] = base;
  changed["output"].output = parse_output("rows:2");
  changed["output"].output_recon = Recon::kNn;
  changed["precision"] = base;
  changed["precision"].precision = &find_precision("f16");
  changed["perforate"] = parse_scheme("rows:2");
  changed["perforate"].recon = Recon::kNn;
  changed["perforate"].host_perforate = true;
  changed["iterations_skip"] = base;
  changed["iterations_skip"].iterations_skip = 0.5;
  // What each changed variant is with that axis at its default.
  std::map<std::string, Variant> unchanged;
  for (const auto& [name, v] : changed) unchanged[name] = base;
  unchanged["perforate"] = changed["perforate"];
  unchanged["perforate"].host_perforate = false;
  // The same values as the command line gives them, crossed by parse_variants.
  std::map<std::string, AxesSpec> spec;
  for (const auto& [name, v] : changed) spec[name].schemes = "accurate";
  spec["load"].loads = "global";
  spec["output"].outputs = "rows:2";
  spec["output"].output_recons = "nn";
  spec["precision"].precisions = "f16";
  spec["perforate"].schemes = "rows:2";
  spec["perforate"].recons = "nn";
  spec["perforate"].perforates = "host";
  spec["iterations_skip"].iterations_skips = "0.5";
  const nlohmann::ordered_json defaults = axis_defaults_json();
  ASSERT_EQ(structural_axes().size(), changed.size());
  for (const StructuralAxis& axis : structural_axes()) {
    EXPECT_EQ(axis.key_segment(base), "") << axis.name;
    EXPECT_EQ(axis.family(base), "") << axis.name;
    for (const auto& app : app_registry())
      EXPECT_FALSE(axis.verdict(base, app)) << axis.name << " " << app.name;
    ASSERT_TRUE(changed.count(axis.name)) << axis.name;
    const Variant& v = changed.at(axis.name);
    const std::string segment = axis.key_segment(v);
    EXPECT_FALSE(segment.empty()) << axis.name;
    EXPECT_EQ(v.axes_key(), segment) << axis.name;  // no other axis speaks for it
    const std::vector<Variant> parsed = parse_variants(spec.at(axis.name));
    ASSERT_EQ(parsed.size(), 1u) << axis.name;
    EXPECT_EQ(parsed[0].id(), v.id()) << axis.name;
    EXPECT_EQ(axis.choices(spec.at(axis.name)).size(), 1u) << axis.name;
    // Applicability is the axis's own: launch perforation needs an iterated app, and an iterated
    // app takes neither a host-packed input nor an f16 input under a float output.
    const AppDescriptor &image_app = find_app("gaussian3"), &iterated = find_app("hotspot");
    EXPECT_EQ(axis.verdict(v, image_app).has_value(), axis.name == std::string("iterations_skip"))
        << axis.name;
    if (axis.name == std::string("perforate")) EXPECT_TRUE(axis.verdict(v, iterated));
    if (axis.name == std::string("iterations_skip")) EXPECT_FALSE(axis.verdict(v, iterated));
    EXPECT_EQ(axis.build_options(unchanged.at(axis.name)), "") << axis.name;
    const std::string options = axis.build_options(v);
    EXPECT_EQ(v.build_options(),
              unchanged.at(axis.name).build_options() + (options.empty() ? "" : " " + options))
        << axis.name;
    const std::string family = axis.family(v);
    if (!family.empty()) EXPECT_EQ(v.family(), family) << axis.name;
    ResultRow row, plain;
    set_structural_fields(v, row);
    set_structural_fields(base, plain);
    row.key = plain.key = "k";
    row.app = plain.app = "gaussian3";
    row.scheme = plain.scheme = "accurate";
    row.recon = plain.recon = "none";
    const nlohmann::ordered_json j = to_json(row), j_plain = to_json(plain);
    bool differs = false;
    for (const AxisField& field : axis.fields) {
      ASSERT_TRUE(j.contains(field.name) || field.text) << field.name;
      differs = differs || j.value(field.name, nlohmann::json()) !=
                               j_plain.value(field.name, nlohmann::json());
      if (field.number || *field.default_text) {
        ASSERT_TRUE(defaults.contains(field.name)) << field.name;
        EXPECT_EQ(j_plain.at(field.name), defaults.at(field.name)) << field.name;
      }
    }
    EXPECT_TRUE(differs) << axis.name << ": the row does not show the value";
    const ResultRow back = row_from_json(nlohmann::json::parse(j.dump()));
    EXPECT_EQ(to_json(back).dump(), j.dump()) << axis.name;
  }
}

TEST(KernelAxes, EveryLayerReadsTheRegistry) {
  AxesSpec defaults;
  defaults.schemes = "accurate";
  const Variant base = parse_variants(defaults).at(0);
  EXPECT_EQ(base.axes_key(), "");
  EXPECT_TRUE(is_exact(base));
  std::set<std::string> flags, keys, fields;
  for (std::size_t axis = 0; axis < kernel_axes().size(); ++axis) {
    const KernelAxis& desc = kernel_axes()[axis];
    EXPECT_TRUE(flags.insert(desc.flag).second && keys.insert(desc.key).second &&
                fields.insert(desc.field).second)
        << desc.flag << ": flag, key prefix and row field are unique";
    ASSERT_GE(desc.values.size(), 2u) << desc.flag;
    EXPECT_STREQ(desc.values[0].build_options, "") << desc.flag << ": the default builds as before";
    EXPECT_THROW(desc.parse("no-such-value"), std::invalid_argument);
    for (std::size_t value = 1; value < desc.values.size(); ++value) {
      const KernelAxisValue& val = desc.values[value];
      AxesSpec spec = defaults;
      spec.kernel[desc.flag] = std::string(desc.values[0].name) + "," + val.name + "," + val.name;
      const auto variants = parse_variants(spec);
      ASSERT_EQ(variants.size(), 2u) << desc.flag;
      const Variant& v = variants[1];
      EXPECT_EQ(v.kernel_value(axis), static_cast<int>(value));
      EXPECT_STREQ(kernel_value_name(v, desc.flag), val.name);
      EXPECT_EQ(v.axes_key(), std::string(desc.key) + ":" + val.name);
      EXPECT_NE(v.build_options().find(val.build_options), std::string::npos) << v.build_options();
      EXPECT_EQ(v.build_options(), base.build_options() + " " + val.build_options);
      EXPECT_EQ(is_exact(v), val.exact) << v.axes_key();
      EXPECT_EQ(races(v), val.races) << v.axes_key();
      for (const AppDescriptor& app : app_registry()) {
        const auto verdict = check_variant(v, app, {8, 8});
        if (!desc.applies_to(app)) {
          ASSERT_TRUE(verdict) << desc.flag << " on " << app.name;
          EXPECT_EQ(verdict->status, Status::kNotApplicable);
          EXPECT_NE(verdict->reason.find(app.name), std::string::npos) << verdict->reason;
        } else if (verdict) {
          EXPECT_TRUE(desc.check) << desc.flag << " on " << app.name << ": " << verdict->reason;
        }
      }
      ResultRow row = timed_row("accurate", 8, 8, 10);
      row.kernel_axes[desc.field] = val.name;
      const auto j = to_json(row);
      ASSERT_TRUE(j.contains(desc.field)) << desc.field;
      EXPECT_EQ(j[desc.field].is_number(), desc.numeric_field);
      EXPECT_EQ(row_from_json(nlohmann::json::parse(j.dump())).kernel_axes.at(desc.field),
                val.name);
    }
  }
  EXPECT_THROW(kernel_axis_index("no-such-axis"), std::invalid_argument);
}

TEST(Metrics, HandComputedCases) {
  // T = {0, 10, 20, 30}, A = {1, 10, 18, 30}: the zero is excluded from mre.
  const ErrorMetrics e = compute_errors({0, 10, 20, 30}, {1, 10, 18, 30}, 4, 1);
  EXPECT_EQ(e.mre_excluded, 1);
  EXPECT_NEAR(e.mre, (0.0 + 2.0 / 20) / 3, 1e-12);
  EXPECT_NEAR(e.mae, 3.0 / 4, 1e-12);
  EXPECT_NEAR(e.me, 0.75 / 30, 1e-12);
  EXPECT_NEAR(e.max_abs, 2, 1e-12);
  EXPECT_NEAR(e.psnr_db, 10 * std::log10(900.0 / (5.0 / 4)), 1e-9);
  // Constant truth: me falls back to the plain mean absolute error; psnr of identical is inf.
  const ErrorMetrics flat = compute_errors({5, 5, 5}, {5, 6, 5}, 3, 1);
  EXPECT_NEAR(flat.me, 1.0 / 3, 1e-12);
  EXPECT_TRUE(std::isinf(compute_errors({5, 5}, {5, 5}, 2, 1).psnr_db));
  EXPECT_GT(compute_errors({5, 5}, {5, 5}, 2, 1).psnr_db, 0);
  // Non-finite elements are skipped and counted.
  const ErrorMetrics nf =
      compute_errors({1, 2, NAN}, {1, std::numeric_limits<float>::infinity(), 3}, 3, 1);
  EXPECT_EQ(nf.nonfinite, 2);
  EXPECT_DOUBLE_EQ(nf.mae, 0);
}

// SPEC 15: every metric is a JSON number or null, never a string; a null says why in
// error.notes, and reads back as what it stood for.
TEST(Metrics, JsonHoldsNumbersOrNullsWithTheirReasons) {
  auto every_metric_is_a_number_or_null = [](const nlohmann::ordered_json& j) {
    for (const auto& [name, value] : j.items())
      if (name != "notes" && !value.is_number() && !value.is_null()) return false;
    return true;
  };
  // Identical outputs: PSNR is infinite; an error-only pass: SSIM was not computed.
  const ErrorMetrics same = compute_errors({1, 2, 3}, {1, 2, 3}, 3, 1, false);
  const nlohmann::ordered_json j = to_json(same);
  EXPECT_TRUE(every_metric_is_a_number_or_null(j)) << j.dump();
  EXPECT_TRUE(j["psnr_db"].is_null());
  EXPECT_TRUE(j["ssim"].is_null());
  EXPECT_EQ(j["mre"], 0.0);
  ASSERT_TRUE(j.contains("notes")) << j.dump();
  EXPECT_EQ(j["notes"].size(), 2u);
  EXPECT_NE(j["notes"]["psnr_db"].get<std::string>().find("infinite"), std::string::npos);
  EXPECT_NE(j["notes"]["ssim"].get<std::string>().find("not computed"), std::string::npos);
  const ErrorMetrics back = errors_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_TRUE(std::isinf(back.psnr_db) && back.psnr_db > 0);
  EXPECT_TRUE(std::isnan(back.ssim));
  EXPECT_EQ(to_json(back).dump(), j.dump());
  // No finite pair at all: every metric null, each with the same reason.
  const ErrorMetrics none = compute_errors({1, 2}, {NAN, NAN}, 2, 1);
  const nlohmann::ordered_json n = to_json(none);
  EXPECT_TRUE(every_metric_is_a_number_or_null(n)) << n.dump();
  for (const char* m : {"mre", "me", "mae", "psnr_db", "max_abs", "wrong_fraction", "ssim"}) {
    EXPECT_TRUE(n[m].is_null()) << m;
    EXPECT_NE(n["notes"][m].get<std::string>().find("finite"), std::string::npos) << m;
  }
  EXPECT_EQ(n["nonfinite"], 2);
  // A finite result has no notes, and documents from before SPEC 15 ("inf" strings) still read.
  const nlohmann::ordered_json f = to_json(compute_errors({0, 10}, {1, 10}, 2, 1));
  EXPECT_FALSE(f.contains("notes")) << f.dump();
  nlohmann::json old = nlohmann::json::parse(j.dump());
  old.erase("notes");
  old["psnr_db"] = "-inf";
  old["ssim"] = "nan";
  const ErrorMetrics legacy = errors_from_json(old);
  EXPECT_TRUE(std::isinf(legacy.psnr_db) && legacy.psnr_db < 0);
  EXPECT_TRUE(std::isnan(legacy.ssim));
}

TEST(Metrics, WrongFractionAndSsimKnownCases) {
  const int w = 32, h = 24;
  std::vector<double> truth(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) truth[static_cast<std::size_t>(y) * w + x] = (x * 7 + y * 13) % 256;
  std::vector<float> same(truth.begin(), truth.end());
  // Identical grids: nothing wrong, SSIM exactly 1.
  const ErrorMetrics id = compute_errors(truth, same, w, h);
  EXPECT_EQ(id.wrong_fraction, 0.0);
  EXPECT_NEAR(id.ssim, 1.0, 1e-12);
  // A constant offset of 10: every element wrong (threshold 1e-3 * max|T| = 0.255), SSIM below 1.
  std::vector<float> offset = same;
  for (float& v : offset) v += 10.0f;
  const ErrorMetrics off = compute_errors(truth, offset, w, h);
  EXPECT_EQ(off.wrong_fraction, 1.0);
  EXPECT_LT(off.ssim, 1.0);
  EXPECT_GT(off.ssim, 0.5);
  // One wrong pixel: 1/N wrong; a difference at the threshold itself is not wrong.
  std::vector<float> one = same;
  one[5] += 3.0f;
  one[9] += 0.25f;  // below 0.255
  EXPECT_DOUBLE_EQ(compute_errors(truth, one, w, h).wrong_fraction, 1.0 / (w * h));
  // The 255-complement is anti-correlated: SSIM below 0.
  std::vector<float> complement = same;
  for (float& v : complement) v = 255.0f - v;
  EXPECT_LT(compute_errors(truth, complement, w, h).ssim, 0.0);
  // A non-finite output element where the truth is finite is wrong.
  std::vector<float> nan = same;
  nan[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_DOUBLE_EQ(compute_errors(truth, nan, w, h).wrong_fraction, 1.0 / (w * h));
  // Small grids use one uniform window: identical is still 1.
  EXPECT_NEAR(mean_ssim({1, 2, 3, 4}, {1, 2, 3, 4}, 2, 2), 1.0, 1e-12);
  // Hand-computed one-window SSIM: x = {0, 2}, y = {1, 1}, L = 2.
  const double c1 = 0.0004, c2 = 0.0036;  // (0.01 L)^2, (0.03 L)^2
  EXPECT_NEAR(mean_ssim({0, 2}, {1, 1}, 2, 1), (2 * 1 * 1 + c1) * c2 / ((1 + 1 + c1) * (1 + c2)),
              1e-12);
}

// --- generators -----------------------------------------------------------------------------
TEST(Synthetic, DeterministicAndInRange) {
  for (const auto& name : synthetic_image_names()) {
    const Grid a = make_synthetic_image(name, 67, 41), b = make_synthetic_image(name, 67, 41);
    EXPECT_EQ(a.data, b.data) << name;
    if (name != "zoneplate")  // the only generator without randomness
      EXPECT_NE(a.data, make_synthetic_image(name, 67, 41, 7).data) << name << " ignores its seed";
    for (float v : a.data) ASSERT_TRUE(v >= 0 && v <= 255) << name << " " << v;
  }
  EXPECT_THROW(make_synthetic_image("plasma", 8, 8), InputError);
  EXPECT_THROW(make_synthetic_image("noise", 0, 8), InputError);
  // Refused before the grid is allocated: more elements than a 32-bit index reaches.
  EXPECT_THROW(make_synthetic_image("noise", 46341, 46341), InputError);
  EXPECT_THROW(make_synthetic_chip(65536, 32768), InputError);
  const HotspotInput c1 = make_synthetic_chip(64, 48), c2 = make_synthetic_chip(64, 48);
  EXPECT_EQ(c1.temp.data, c2.temp.data);
  EXPECT_EQ(c1.power.data, c2.power.data);
  for (float t : c1.temp.data) ASSERT_TRUE(t > 80.0f && t < 400.0f);  // above ambient, plausible
  for (float p : c1.power.data) ASSERT_GT(p, 0.0f);
}

// --- CPU model ------------------------------------------------------------------------------
GridD random_d(int w, int h, unsigned seed) {
  const Grid g = test::random_grid(w, h, seed);
  return to_double(g.data, w, h);
}

TEST(Model, AccurateTilesEqualTheReference) {
  const GridD in = random_d(23, 17, 3);
  for (const auto& app : app_registry()) {
    if (!app.takes_images()) continue;
    const GridD ref = reference_run(app, in, nullptr, 1);
    const GridD model = model_run(app, parse_scheme("accurate"), {8, 4}, in, nullptr, 1);
    for (std::size_t i = 0; i < ref.data.size(); ++i)
      ASSERT_NEAR(model.data[i], ref.data[i], 1e-9) << app.name;
  }
}

TEST(Model, RowsPatternAnchoredToGlobalRows) {
  // rows:3 with radius 1: tile row ty of group gy is kept when (gy*wy + ty) % 3 == 0.
  Variant rows3 = parse_scheme("rows:3");
  const auto mask = elements_read_by_any(rows3, 1, {4, 4}, 5, 12);
  // Global rows g kept when (g + 1) % 3 == 0: 2, 5, 8, 11, and -1 (clamped to row 0).
  const std::vector<int> kept = {1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  for (int y = 0; y < 12; ++y) EXPECT_EQ(mask[static_cast<std::size_t>(y) * 5], kept[y]) << y;
  // The rows a group skips are never read by it.
  const auto group = elements_read_by_group(rows3, 1, {4, 4}, 5, 12, 0, 1);
  EXPECT_EQ(group[3 * 5], 0);
  EXPECT_EQ(group[5 * 5], 1);
}

TEST(Model, RowsIndependentOfWorkGroupWidth) {
  const GridD in = random_d(40, 30, 4);
  const AppDescriptor& app = find_app("gaussian5");
  Variant v = parse_scheme("rows:3");
  v.recon = Recon::kLi;
  const GridD a = model_run(app, v, {8, 4}, in, nullptr, 1);
  const GridD b = model_run(app, v, {32, 4}, in, nullptr, 1);
  EXPECT_EQ(a.data, b.data);
  Variant c = parse_scheme("cols:2");
  c.recon = Recon::kNn;
  EXPECT_EQ(model_run(app, c, {8, 4}, in, nullptr, 1).data,
            model_run(app, c, {8, 16}, in, nullptr, 1).data);
}

TEST(Model, LinearInterpolationIsExactOnLinearRamps) {
  // A vertical ramp is reproduced exactly by li wherever both neighbours lie in the tile.
  GridD in(16, 16);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) in.at(y, x) = 3.0 * y;
  Variant v = parse_scheme("rows:2");
  v.recon = Recon::kLi;
  const GridD out = model_run(find_app("inversion"), v, {4, 8}, in, nullptr, 1);
  // Tile rows 1..6 of each 8-row group (radius 0): kept rows even, odd rows interior except row 7.
  for (int y : {1, 3, 5, 9, 11, 13}) EXPECT_DOUBLE_EQ(out.at(y, 3), 255.0 - 3.0 * y) << y;
  // The last tile row has no kept row below inside the tile: nearest neighbour (row above).
  EXPECT_DOUBLE_EQ(out.at(7, 3), 255.0 - 3.0 * 6);
}

TEST(Model, StencilHaloTakesNearestCoreElement) {
  GridD in = random_d(8, 8, 5);
  // One 8x8 group: the halo of radius 1 replicates the core border, and the core border of an
  // 8x8 grid is the grid border, so stencil equals accurate here (clamp-to-edge).
  const AppDescriptor& g3 = find_app("gaussian3");
  const GridD s = model_run(g3, parse_scheme("stencil"), {8, 8}, in, nullptr, 1);
  const GridD ref = reference_run(g3, in, nullptr, 1);
  for (std::size_t i = 0; i < s.data.size(); ++i) EXPECT_NEAR(s.data[i], ref.data[i], 1e-12);
  // With 4x4 groups the interior group borders differ from accurate.
  const GridD s4 = model_run(g3, parse_scheme("stencil"), {4, 4}, in, nullptr, 1);
  EXPECT_NE(s4.at(3, 3), ref.at(3, 3));
}

TEST(Model, VecWorkGroupsAreModelledAsTheirBlock) {
  const GridD in = random_d(50, 20, 6);
  Variant v = parse_scheme("cols:3");
  v.recon = Recon::kLi;
  const AppDescriptor& app = find_app("sobel3");
  EXPECT_EQ(model_run(app, v, {8, 4, 4}, in, nullptr, 1).data,
            model_run(app, v, {32, 4, 1}, in, nullptr, 1).data);
  EXPECT_EQ(model_run(app, v, {8, 2, 4, 2}, in, nullptr, 1).data,
            model_run(app, v, {32, 4, 1}, in, nullptr, 1).data);
  // cols:4 on a 1-wide work-group: invalid with vec 1 (tile width 3), valid with vec 4 (width 6).
  EXPECT_TRUE(check_variant(parse_scheme("cols:4"), 1, {1, 8, 1}));
  EXPECT_FALSE(check_variant(parse_scheme("cols:4"), 1, {1, 8, 4}));
}

TEST(Model, OutputSourcesByHand) {
  // k = 2 over 6 outputs: computed at 1, 3, 5. Output 2 ties between 1 and 3: nn takes 1.
  EXPECT_EQ(output_source(0, 6, 2, Recon::kNn).a, 1);
  EXPECT_EQ(output_source(2, 6, 2, Recon::kNn).a, 1);
  EXPECT_EQ(output_source(4, 6, 2, Recon::kNn).a, 3);
  const OutputSource li = output_source(2, 6, 2, Recon::kLi);
  EXPECT_EQ(li.a, 1);
  EXPECT_EQ(li.b, 3);
  EXPECT_DOUBLE_EQ(li.w, 0.5);
  // k = 3 over 8 outputs: computed at 1, 4, 7.
  EXPECT_EQ(output_source(6, 8, 3, Recon::kNn).a, 7);
  EXPECT_EQ(output_source(5, 8, 3, Recon::kNn).a, 4);
  const OutputSource third = output_source(5, 8, 3, Recon::kLi);
  EXPECT_EQ(third.a, 4);
  EXPECT_EQ(third.b, 7);
  EXPECT_DOUBLE_EQ(third.w, 1.0 / 3.0);
  // A final partial period without its computed line (k = 3 over 7: computed at 1 and 4):
  // outputs past the last computed line take it, for li too; so do those before the first.
  EXPECT_EQ(output_source(6, 7, 3, Recon::kLi).a, 4);
  EXPECT_EQ(output_source(6, 7, 3, Recon::kLi).b, 4);
  EXPECT_EQ(output_source(0, 7, 3, Recon::kLi).b, 1);
  // k = 4 over 3 outputs: one computed line, at 2.
  EXPECT_EQ(output_source(0, 3, 4, Recon::kLi).a, 2);
  // k = 1: every output is its own source.
  EXPECT_EQ(output_source(5, 9, 1, Recon::kLi).b, 5);
}

TEST(Model, BilinearOutputsAreExactOnPlanes) {
  // Inversion of a plane is a plane: center:3 with li reproduces it between the outer computed
  // centres (rows 1..16 of 18, columns 1..22 of 24), whatever the work-group.
  const AppDescriptor& app = find_app("inversion");
  GridD in(24, 18);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) in.at(y, x) = 3.0 * y + 2.0 * x;
  AxesSpec a;
  a.schemes = "accurate";
  a.outputs = "center:3";
  a.output_recons = "li";
  const Variant v = parse_variants(a)[0];
  for (const WorkGroup wg : {WorkGroup{4, 2}, WorkGroup{3, 5}}) {
    const GridD out = model_run(app, v, wg, in, nullptr, 1);
    for (int y = 1; y <= 16; ++y)
      for (int x = 1; x <= 22; ++x)
        EXPECT_NEAR(out.at(y, x), 255.0 - in.at(y, x), 1e-9) << y << "," << x;
    EXPECT_DOUBLE_EQ(out.at(17, 23), 255.0 - in.at(16, 22));  // nn past the last centres
  }
  // nn copies the centre: output (0, 0) takes computed (1, 1), and (2, 2) too.
  a.output_recons = "nn";
  const GridD nn = model_run(app, parse_variants(a)[0], {4, 2}, in, nullptr, 1);
  EXPECT_DOUBLE_EQ(nn.at(0, 0), 255.0 - in.at(1, 1));
  EXPECT_DOUBLE_EQ(nn.at(2, 2), 255.0 - in.at(1, 1));
}

TEST(Model, ApplicabilityVerdicts) {
  EXPECT_EQ(check_variant(parse_scheme("stencil"), 0, {16, 8})->status, Status::kNotApplicable);
  EXPECT_FALSE(check_variant(parse_scheme("stencil"), 1, {16, 8}));
  // rows:4 needs a tile height of at least 4: wy 1 + 2r (r = 1) = 3 is too short.
  const auto v = check_variant(parse_scheme("rows:4"), 1, {16, 1});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->status, Status::kInvalidConfig);
  EXPECT_NE(v->reason.find("height 3"), std::string::npos) << v->reason;
  EXPECT_FALSE(check_variant(parse_scheme("rows:3"), 1, {16, 1}));
  EXPECT_EQ(check_variant(parse_scheme("cols:4"), 0, {2, 8})->status, Status::kInvalidConfig);
}

TEST(Model, BytesModelCountsDistinctReads) {
  Variant rows2 = parse_scheme("rows:2");
  // Radius 1, 8 rows: kept global rows are odd ones plus row -1 (clamped to 0): 0,1,3,5,7.
  EXPECT_DOUBLE_EQ(distinct_elements_read(rows2, 1, {4, 4}, 10, 8), 5.0 * 10);
  EXPECT_DOUBLE_EQ(distinct_elements_read(parse_scheme("stencil"), 2, {4, 4}, 10, 8), 80.0);
  EXPECT_DOUBLE_EQ(distinct_elements_read(parse_scheme("accurate"), 0, {4, 4}, 10, 8), 80.0);
}

// The cold flush: 1.5x the probed last-level cache, never under 4x the reported one; 256 MiB (or
// that 4x) without a measurement; within half the largest allocation. $KPERF_FLUSH_BYTES
// overrides the rule, and then the cache is not probed.
TEST(Validation, ColdFlushFillsHalfAgainTheProbedCache) {
  const char* before = std::getenv("KPERF_FLUSH_BYTES");
  const std::string saved = before ? before : "";
  ::unsetenv("KPERF_FLUSH_BYTES");
  DeviceInfo dev;
  dev.global_mem_cache_size = 4u << 20;
  dev.max_mem_alloc_size = std::size_t{1} << 34;
  int probes = 0;
  auto probe = [&](std::optional<std::uint64_t> bytes) {
    return [&probes, bytes] {
      ++probes;
      return bytes;
    };
  };
  EXPECT_EQ(cold_flush_bytes(dev, probe(60000000)), 90000000u);
  EXPECT_EQ(cold_flush_bytes(dev, probe(std::nullopt)), std::size_t{256} << 20);
  EXPECT_EQ(cold_flush_bytes(dev, probe(1000000)), std::size_t{16} << 20);  // an inner level
  dev.global_mem_cache_size = std::size_t{128} << 20;  // a driver that reports a large cache
  EXPECT_EQ(cold_flush_bytes(dev, probe(std::nullopt)), std::size_t{512} << 20);
  dev.global_mem_cache_size = 4u << 20;
  dev.max_mem_alloc_size = 100000000;
  EXPECT_EQ(cold_flush_bytes(dev, probe(60000000)), 50000000u);
  EXPECT_EQ(probes, 5);
  ::setenv("KPERF_FLUSH_BYTES", "4096", 1);
  EXPECT_EQ(cold_flush_bytes(dev, probe(60000000)), 4096u);
  EXPECT_EQ(probes, 5);  // not probed
  if (before)
    ::setenv("KPERF_FLUSH_BYTES", saved.c_str(), 1);
  else
    ::unsetenv("KPERF_FLUSH_BYTES");
}

// Launch validation against a fake device: a small mobile-like GPU.
TEST(Validation, FakeDeviceLimits) {
  DeviceInfo dev;
  dev.max_work_group_size = 256;
  dev.max_work_item_sizes = {128, 64, 64};
  dev.local_mem_size = 4096;
  const AppDescriptor& g5 = find_app("gaussian5");
  const Variant accurate = parse_scheme("accurate");
  EXPECT_FALSE(check_launch(g5, accurate, {16, 8}, dev));
  const auto too_many = check_launch(g5, accurate, {32, 16}, dev);
  ASSERT_TRUE(too_many);
  EXPECT_EQ(too_many->status, Status::kInvalidConfig);
  EXPECT_NE(too_many->reason.find("CL_DEVICE_MAX_WORK_GROUP_SIZE 256"), std::string::npos)
      << too_many->reason;
  const auto too_wide = check_launch(g5, accurate, {256, 1}, dev);
  ASSERT_TRUE(too_wide);
  EXPECT_NE(too_wide->reason.find("CL_DEVICE_MAX_WORK_ITEM_SIZES[0] = 128"), std::string::npos);
  const auto too_tall = check_launch(g5, accurate, {2, 128}, dev);
  ASSERT_TRUE(too_tall);
  EXPECT_NE(too_tall->reason.find("CL_DEVICE_MAX_WORK_ITEM_SIZES[1] = 64"), std::string::npos);
  // 16x8 work-items with 4x4 outputs each: a (64+8) x (32+4) float tile = 10368 bytes > 4096.
  const auto big_tile = check_launch(g5, accurate, {16, 8, 4, 4}, dev);
  ASSERT_TRUE(big_tile);
  EXPECT_NE(big_tile->reason.find("tile needs 10368 bytes"), std::string::npos) << big_tile->reason;
  EXPECT_EQ(tile_local_bytes(g5, accurate, {16, 8, 4, 4}), 10368u);
  // Accurate inversion reads global memory directly: no tile, so no local-memory limit.
  EXPECT_EQ(tile_local_bytes(find_app("inversion"), accurate, {16, 16, 4, 4}), 0u);
  // Scheme verdicts come first.
  EXPECT_EQ(check_launch(find_app("inversion"), parse_scheme("stencil"), {8, 8}, dev)->status,
            Status::kNotApplicable);
}

TEST(Hotspot, CoefficientsFollowRodinia) {
  const HotspotCoefficients c = hotspot_coefficients(512, 512);
  // Rodinia: Cap = 0.5 * 1.75e6 * 0.0005 * (0.016/512)^2; step = 0.001 / (3e6 /
  // (0.5*0.0005*1.75e6)).
  const double gw = 0.016 / 512, cap = 0.5 * 1.75e6 * 0.0005 * gw * gw;
  const double step = 0.001 / (3.0e6 / (0.5 * 0.0005 * 1.75e6));
  EXPECT_NEAR(c.step_div_cap, step / cap, 1e-9 * step / cap);
  EXPECT_NEAR(c.rz_inv, 100 * gw * gw / 0.0005, 1e-15);
  EXPECT_DOUBLE_EQ(c.amb_temp, 80.0);
  // Stable at Rodinia's own sizes, diverging from about 1450^2 on (step/Cap grows as N^2).
  EXPECT_LT(hotspot_stability_factor(1024, 1024), 1.0);
  EXPECT_GT(hotspot_stability_factor(2048, 2048), 1.0);
  EXPECT_NEAR(hotspot_stability_factor(2048, 2048) / hotspot_stability_factor(1024, 1024), 4.0,
              0.05);
}

// SPEC 11 by hand on one window: the 13 taps of the round d = 5 window, and under loop
// perforation the 7 taps of even row-major index (the centre's row and column).
TEST(Bilateral, WindowAndLoopPerforationByHand) {
  const AppDescriptor& app = find_app("bilateral");
  GridD in(5, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) in.at(y, x) = 10.0 * y + 3.0 * x + ((x * y) % 3) * 7.0;
  auto filter = [&](const std::vector<std::pair<int, int>>& taps, double c, double s) {
    double num = 0, den = 0;
    for (auto [dy, dx] : taps) {
      const double q = in.at(2 + dy, 2 + dx), d = q - in.at(2, 2);
      const double w =
          std::exp(-(dy * dy + dx * dx) / (2 * s * s)) * std::exp(-d * d / (2 * c * c));
      num += w * q, den += w;
    }
    return num / den;
  };
  const std::vector<std::pair<int, int>> round = {{-2, 0}, {-1, -1}, {-1, 0}, {-1, 1}, {0, -2},
                                                  {0, -1}, {0, 0},   {0, 1},  {0, 2},  {1, -1},
                                                  {1, 0},  {1, 1},   {2, 0}};
  const std::vector<std::pair<int, int>> cross = {{-2, 0}, {-1, 0}, {0, -2}, {0, 0},
                                                  {0, 2},  {1, 0},  {2, 0}};
  AppParams p;
  p.sigma_color = 12.0;
  p.sigma_space = 1.5;
  EXPECT_NEAR(reference_run(app, in, nullptr, 1, p).at(2, 2), filter(round, 12.0, 1.5), 1e-12);
  EXPECT_NEAR(reference_run(app, in, nullptr, 1).at(2, 2), filter(round, 25.0, 2.0), 1e-12);
  AxesSpec loop;
  loop.schemes = "accurate";
  loop.kernel["loop-skip"] = "2";
  const Variant v = parse_variants(loop).at(0);
  ASSERT_EQ(kernel_value_name(v, "loop-skip"), std::string("2"));
  EXPECT_NEAR(model_run(app, v, {8, 8}, in, nullptr, 1, p).at(2, 2), filter(cross, 12.0, 1.5),
              1e-12);
  EXPECT_GT(std::fabs(filter(cross, 12.0, 1.5) - filter(round, 12.0, 1.5)), 1e-3);
  EXPECT_THROW(parse_bilateral_sigmas("0,2"), std::invalid_argument);
  EXPECT_THROW(parse_bilateral_sigmas("25,x"), std::invalid_argument);
  EXPECT_THROW(parse_bilateral_sigmas("25"), std::invalid_argument);
  EXPECT_THROW(parse_bilateral_sigmas("nan,2"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse_bilateral_sigmas("10,0.5").sigma_space, 0.5);
}

}  // namespace
// Result documents compress to gzip that other tools read, and read back gzip that they write
// (a member with a file name and a time, as Python's gzip module writes); corrupt or truncated
// streams are an InputError naming the file.
TEST(Gzip, RoundTripsAndReadsOtherWriters) {
  for (const std::string& text :
       {std::string(), std::string("x"), std::string(100000, 'a'),
        std::string("{\"results\": [") + std::string(5000, '7') + "]}\n"}) {
    const std::string packed = gzip_compress(text);
    EXPECT_TRUE(is_gzip(packed));
    EXPECT_EQ(gzip_decompress(packed, "t"), text);
    if (text.size() > 1000) EXPECT_LT(packed.size(), text.size() / 4);
  }
  const std::string python(
      "\x1f\x8b\x08\x08\x00\xf1\x53\x65\x02\xff\x64\x6f\x63\x2e\x6a\x73\x6f\x6e\x00"
      "\xab\x56\xca\x2e\x48\x2d\x4a\x53\xb2\x52\x88\x36\xd4\x51\x30\xd2\x51\x30\x8e"
      "\xad\xe5\x02\x00\xd5\x2d\xa0\x6a\x15\x00\x00\x00",
      50);
  EXPECT_EQ(gzip_decompress(python, "doc.json.gz"), "{\"kperf\": [1, 2, 3]}\n");
  // Two members read as their concatenation (what `cat a.gz b.gz` makes).
  EXPECT_EQ(gzip_decompress(gzip_compress("abc") + gzip_compress("def"), "t"), "abcdef");
  std::string corrupt = gzip_compress(std::string(2000, 'q') + "tail");
  corrupt[corrupt.size() - 6] ^= 0x40;  // the CRC no longer matches
  EXPECT_THROW(gzip_decompress(corrupt, "c.gz"), InputError);
  const std::string whole = gzip_compress("some document");
  EXPECT_THROW(gzip_decompress(whole.substr(0, whole.size() - 3), "t.gz"), InputError);
  EXPECT_THROW(gzip_decompress(std::string("\x1f\x8b\x08", 3), "t.gz"), InputError);
  EXPECT_FALSE(is_gzip("{}"));
  EXPECT_TRUE(is_gzip_path("r.json.gz"));
  EXPECT_FALSE(is_gzip_path("r.json"));
  // Documents: written compressed by name, read by content.
  test::TempDir dir;
  write_document_atomic((dir / "r.json.gz").string(), "{\"a\": 1}\n");
  EXPECT_TRUE(is_gzip(read_file((dir / "r.json.gz").string())));
  EXPECT_EQ(read_document((dir / "r.json.gz").string()), "{\"a\": 1}\n");
  write_document_atomic((dir / "r.json").string(), "{}\n");
  EXPECT_EQ(read_document((dir / "r.json").string()), "{}\n");
}

}  // namespace kperf
