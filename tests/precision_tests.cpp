// Tests of storage precision, host perforation and transfer timing (SPEC 10): IEEE half
// rounding against hand-worked cases, half inputs and outputs on the device against float runs
// on pre-rounded data, host-packed inputs bit-identical to device perforation, NaN poisoning of
// the packed path, and the --transfers fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "apps.hpp"
#include "device_input.hpp"
#include "schemes.hpp"
#include "storage.hpp"
#include "synthetic.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

using test::Outcome;

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

// The floats a grid holds once stored as `type`.
Grid rounded_to(const StorageType& type, Grid g) {
  std::vector<unsigned char> bytes(g.data.size() * type.bytes);
  type.encode(g.data.data(), bytes.data(), g.data.size());
  type.decode(bytes.data(), g.data.data(), g.data.size());
  return g;
}

AxesSpec axes(const std::string& schemes, const std::string& recons, const std::string& loads,
              const std::string& precisions, const std::string& perforates = "device") {
  AxesSpec a;
  a.schemes = schemes;
  a.recons = recons;
  a.loads = loads;
  a.precisions = precisions;
  a.perforates = perforates;
  return a;
}

Variant with(Variant v, const char* precision, bool host) {
  v.precision = &find_precision(precision);
  v.host_perforate = host;
  return v;
}

float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Hand-worked round-to-nearest-even cases at the edges of half's range.
TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                      // largest half
  EXPECT_EQ(float_to_half(65519.996f), 0x7BFF);                    // below the halfway point
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                      // a tie rounds to even: infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);         // tie between 0 and 2^-24: 0
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);         // tie between 1 and 2 ulps: 2
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie: even mantissa
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie: up to even
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(round_to_half(0.1), static_cast<double>(half_to_float(0x2E66)));
}

// Every half survives the round trip, and the bulk (F16C where available, threaded)
// conversions agree with the scalar ones on any float.
TEST(Half, BulkConversionsEqualTheScalarOnes) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const std::uint16_t bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF)) continue;  // NaN
    ASSERT_EQ(float_to_half(half_to_float(bits)), bits) << std::hex << h;
  }
  std::vector<float> values;
  std::uint64_t s = 12345;
  while (values.size() < 300000) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const float f = bits_to_float(static_cast<std::uint32_t>(s >> 32));
    if (!std::isnan(f)) values.push_back(f);
  }
  std::vector<std::uint16_t> bulk(values.size());
  floats_to_halves(values.data(), bulk.data(), values.size());
  std::vector<float> back(values.size());
  halves_to_floats(bulk.data(), back.data(), bulk.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(bulk[i], float_to_half(values[i])) << values[i];
    const float scalar = half_to_float(bulk[i]);
    ASSERT_EQ(std::memcmp(&back[i], &scalar, sizeof scalar), 0) << bulk[i];
  }
}

// bfloat16 keeps a float's upper 16 bits, rounded to nearest even; NaN stays NaN (a quiet one),
// overflow past the largest bfloat16 goes to infinity. The storage type's bulk conversions agree.
TEST(BFloat16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F808000u)), 0x3F80);  // tie: even (down)
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F818000u)), 0x3F82);  // tie: even (up)
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(float_to_bf16(bits_to_float(0x7F7FFFFFu)), 0x7F80);  // largest float: infinity
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(bits_to_float(0x00010000u)), 0x0001);         // subnormals stay exact
  const std::uint16_t nan = float_to_bf16(bits_to_float(0x7F800001u));  // a NaN whose payload
  EXPECT_TRUE(std::isnan(bf16_to_float(nan)));                          // is in the low bits
  EXPECT_EQ(bf16_to_float(0x4300), 128.0f);
  EXPECT_EQ(round_to_bf16(255.0), 255.0);
  EXPECT_EQ(round_to_bf16(257.0), 256.0);  // 8 significant bits
  const StorageType& type = storage_type("bf16");
  EXPECT_EQ(type.bytes, 2u);
  std::vector<float> values(100001);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.0731f - 3000.0f;
  std::vector<std::uint16_t> bulk(values.size());
  type.encode(values.data(), bulk.data(), values.size());
  std::vector<float> back(values.size());
  type.decode(bulk.data(), back.data(), back.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(bulk[i], float_to_bf16(values[i])) << values[i];
    ASSERT_EQ(back[i], bf16_to_float(bulk[i]));
    ASSERT_EQ(static_cast<double>(back[i]), type.round(values[i]));
  }
}

// The packed buffer of host perforation: about 1/K of the grid, line p holding grid line
// clamp(p K - r), and no line that device perforation would not read. Width 203 gives cols:2's
// one-pass encoders many vector groups, starting at every alignment of the output row.
TEST(HostPerforation, PackedBufferHoldsOnlyKeptLines) {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{45, 37}, {203, 19}}) {
    const Grid in = test::random_grid(w, h, 3);
    for (const char* scheme : {"rows:2", "rows:3", "cols:2", "cols:4"})
      for (int radius : {0, 1, 2}) {
        Variant v = with(parse_scheme(scheme), "f32", true);
        v.recon = Recon::kNn;
        const bool rows = std::string(v.scheme->family) == "rows";
        const InputLayout layout = input_layout(v, radius, w, h);
        const int n = rows ? h : w, packed = rows ? layout.height : layout.width;
        EXPECT_EQ(packed, (n - 1 + radius + v.skip - 1) / v.skip + 1) << scheme;
        EXPECT_LE(packed, n / v.skip + 2) << scheme;
        EXPECT_EQ(rows ? layout.width : layout.height, rows ? w : h);
        EXPECT_EQ(layout.bytes(), static_cast<std::size_t>(layout.width) * layout.height * 4);
        // Lines device perforation never reads are NaN; none reaches the packed buffer.
        const WorkGroup wg{8, 8};
        const auto read = elements_read_by_any(v, radius, wg, w, h);
        Grid poisoned = in;
        for (std::size_t i = 0; i < read.size(); ++i)
          if (!read[i]) poisoned.data[i] = std::numeric_limits<float>::quiet_NaN();
        const std::vector<unsigned char> bytes = make_input(v, radius, poisoned);
        ASSERT_EQ(bytes.size(), layout.bytes());
        const float* packed_values = reinterpret_cast<const float*>(bytes.data());
        for (int y = 0; y < layout.height; ++y)
          for (int x = 0; x < layout.width; ++x) {
            const int sy = rows ? std::clamp(y * v.skip - radius, 0, h - 1) : y;
            const int sx = rows ? x : std::clamp(x * v.skip - radius, 0, w - 1);
            ASSERT_EQ(packed_values[y * layout.width + x], in.at(sy, sx))
                << scheme << " r" << radius;
          }
        // f16 and bf16: the same lines, rounded.
        const std::vector<unsigned char> halves = make_input(with(v, "f16", true), radius, in);
        const std::vector<unsigned char> bf16s = make_input(with(v, "bf16", true), radius, in);
        ASSERT_EQ(halves.size(), layout.bytes() / 2);
        ASSERT_EQ(bf16s.size(), layout.bytes() / 2);
        const auto* h16 = reinterpret_cast<const std::uint16_t*>(halves.data());
        const auto* b16 = reinterpret_cast<const std::uint16_t*>(bf16s.data());
        for (std::size_t i = 0; i < halves.size() / 2; ++i) {
          ASSERT_EQ(h16[i], float_to_half(packed_values[i])) << scheme << " w" << w << " " << i;
          ASSERT_EQ(b16[i], float_to_bf16(packed_values[i])) << scheme << " w" << w << " " << i;
        }
      }
  }
}

// Every line a tile can ask host perforation for maps inside the packed buffer. Blocks that overlap
// their left or upper neighbour (the shared and fused output fills) start their tile more than
// RADIUS lines before the grid; packed lines are clamped at 0 as well as at the end, where they
// once went negative and read before the buffer (Oclgrind: an invalid read in kperf_load_buffer).
// The functions run on the device, as the kernels run them, over lines from far before the grid
// to far past it.
TEST(HostPerforation, PackedSourceLinesStayInsideTheBuffer) {
  KPERF_REQUIRE_DEVICE();
  const std::string source =
      "#include \"perforate_host.cl\"\n"
      "__kernel void lines(__global int* out, int first, int n) {\n"
      "  const int i = get_global_id(0);\n"
      "  out[i] = KPERF_PACKED_ROWS ? kperf_src_row(first + i, n) : kperf_src_col(first + i, n);\n"
      "}\n";
  const int n = 37, first = -200, count = 500;
  for (int rows : {0, 1})
    for (int radius : {0, 2})
      for (int skip : {2, 3}) {
        const std::string options = "-cl-std=CL1.2 -I " + std::string(KPERF_TEST_KERNEL_ROOT) +
                                    "/schemes -DRADIUS=" + std::to_string(radius) +
                                    " -DSKIP=" + std::to_string(skip) +
                                    " -DKPERF_PACKED_ROWS=" + std::to_string(rows);
        cl::Kernel kernel(env->build(source, options), "lines");
        cl::Buffer out(env->context(), CL_MEM_WRITE_ONLY, count * sizeof(cl_int));
        kernel.setArg(0, out);
        kernel.setArg(1, static_cast<cl_int>(first));
        kernel.setArg(2, static_cast<cl_int>(n));
        env->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(count));
        std::vector<cl_int> packed(count);
        env->queue().enqueueReadBuffer(out, CL_TRUE, 0, count * sizeof(cl_int), packed.data());
        const int lines = (n - 1 + radius + skip - 1) / skip + 1;
        for (int i = 0; i < count; ++i) {
          const int g = first + i;
          ASSERT_GE(packed[i], 0) << (rows ? "row " : "column ") << g << " r" << radius << " k"
                                  << skip;
          ASSERT_LT(packed[i], lines) << (rows ? "row " : "column ") << g;
          // A kept line holds the grid line that clamping gives it.
          if ((((g + radius) % skip) + skip) % skip == 0)
            ASSERT_EQ(std::clamp(packed[i] * skip - radius, 0, n - 1), std::clamp(g, 0, n - 1))
                << g;
        }
      }
}

class Precision : public ::testing::TestWithParam<std::string> {};

// f16in on an input equals f32 on that input rounded to half, bit for bit (so every load path
// rounds its half reads exactly as the CPU model does), and f16 outputs are those float outputs
// rounded to nearest even; bf16 likewise with bfloat16. Widths 52 (16-byte rows: the wide loads
// and stores) and 45.
TEST_P(Precision, HalfStorageEqualsFloatOnRoundedData) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 1);
  const std::vector<WorkGroup> wgs = {{8, 4}, {4, 2, 4, 2}};
  int compared = 0;
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{52, 29}, {45, 37}})
    for (const auto& [stored_as, precisions] :
         std::vector<std::pair<std::string, std::string>>{{"f16", "f16in,f16"}, {"bf16", "bf16"}}) {
      const StorageType& type = storage_type(stored_as);
      const std::string loads =
          app.traits.iterated || !type.image_channel_type ? "local,global" : "local,global,image";
      AppInput input = input_for(app, w, h, 17);
      AppInput rounded = input;
      rounded.in = rounded_to(type, input.in);
      if (input.power) rounded.power = rounded_to(type, *input.power);
      const auto halves = parse_variants(axes("accurate,rows:2,cols:3", "li", loads, precisions));
      const auto floats = parse_variants(axes("accurate,rows:2,cols:3", "li", loads, "f32"));
      // One shape per scheme and load path, the same for its float reference.
      auto group = [](const Variant& v) { return v.label() + "/" + v.load_path().name; };
      const test::ShapeSample sample(floats, group, wgs, 1, test::app_index(app));
      const Outcome half_run =
          test::run_through_runner(*env, {&app}, halves, wgs, input.in, input.power_ptr(), 1,
                                   KPERF_TEST_KERNEL_ROOT, false, {}, "", sample);
      const Outcome float_run =
          test::run_through_runner(*env, {&app}, floats, wgs, rounded.in, rounded.power_ptr(), 1,
                                   KPERF_TEST_KERNEL_ROOT, false, {}, "", sample);
      for (const auto& v : halves)
        for (const auto& wg : wgs) {
          if (!sample(v, wg)) continue;
          const ResultRow* row = half_run.find(app.name, v, wg);
          const ResultRow* ref = float_run.find(app.name, with(v, "f32", false), wg);
          ASSERT_TRUE(row && ref) << v.label() << " " << v.axes_key();
          if (!ref->ok()) continue;
          if (app.traits.iterated && std::string(v.precision_info().name) == "f16in") {
            EXPECT_EQ(row->status, Status::kNotApplicable) << row->key;
            continue;
          }
          if (v.load_path().reads_image && (!env->info().image_support ||
                                            row->reason.find("CL_HALF_FLOAT") != std::string::npos))
            continue;  // a device without (correct) half images: a row with the reason
          ASSERT_EQ(row->status, Status::kOk) << row->key << ": " << row->reason << row->build_log;
          const Grid& a = half_run.outputs.at(row->key);
          const Grid& b = float_run.outputs.at(ref->key);
          const StorageType& out = *v.precision_info().out;
          for (std::size_t i = 0; i < a.data.size(); ++i) {
            const float expect = static_cast<float>(out.round(b.data[i]));
            ASSERT_EQ(std::memcmp(&a.data[i], &expect, sizeof expect), 0)
                << row->key << " element " << i << ": " << a.data[i] << " vs " << expect;
          }
          ++compared;
        }
    }
  EXPECT_GE(compared, (app.traits.iterated ? 16 : 44) / (test::full_matrix() ? 1 : 2));
}

INSTANTIATE_TEST_SUITE_P(AllApps, Precision, ::testing::ValuesIn(test::all_app_names()));

class HostPerforation : public ::testing::TestWithParam<std::string> {};

// Host perforation gives device perforation's outputs bit for bit (every app, nn and li, rows
// and columns, every load path, float and half), at odd and aligned sizes; with the lines
// device perforation never reads poisoned, still the same outputs.
TEST_P(HostPerforation, BitIdenticalToDevicePerforation) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app(GetParam());
  KPERF_SAMPLE_APP(app, 2);
  const std::vector<WorkGroup> wgs = {{5, 3}, {4, 2, 4, 2}};
  // The image path once (its packed coordinates are the buffer paths' functions).
  const std::string loads = app.name == "gaussian3" ? "local,global,image" : "local,global";
  const auto variants =
      parse_variants(axes("rows:2,cols:3", "nn,li", loads, "f32,f16", "device,host"));
  // One shape per variant, the same on the device and the host.
  const test::ShapeSample sample(
      variants,
      [](const Variant& v) {
        return v.label() + "/" + v.load_path().name + "/" + v.precision_info().name;
      },
      wgs, 1, test::app_index(app));
  int compared = 0;
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{52, 29}, {45, 37}}) {
    const AppInput input = input_for(app, w, h, 23);
    const Outcome o =
        test::run_through_runner(*env, {&app}, variants, wgs, input.in, input.power_ptr(), 1,
                                 KPERF_TEST_KERNEL_ROOT, false, {}, "", sample);
    for (const auto& v : variants) {
      if (!v.host_perforate) continue;
      for (const auto& wg : wgs) {
        if (!sample(v, wg)) continue;
        const ResultRow* host = o.find(app.name, v, wg);
        const ResultRow* device = o.find(app.name, with(v, v.precision_info().name, false), wg);
        ASSERT_TRUE(host && device) << v.label() << " " << v.axes_key();
        if (app.traits.iterated) {
          EXPECT_EQ(host->status, Status::kNotApplicable) << host->key;
          continue;
        }
        if (!device->ok()) {  // e.g. half images on a device that reads them wrong
          EXPECT_EQ(host->status, device->status) << host->key;
          continue;
        }
        ASSERT_EQ(host->status, Status::kOk)
            << host->key << ": " << host->reason << host->build_log;
        const Grid& a = o.outputs.at(host->key);
        const Grid& b = o.outputs.at(device->key);
        ASSERT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)), 0)
            << host->key;
        ++compared;
      }
    }
  }
  if (app.traits.iterated) return;
  EXPECT_GE(compared, test::full_matrix() ? 50 : 25);

  // Poisoned: elements device perforation never reads are NaN in the input.
  const int w = 64, h = 40;
  const AppInput input = input_for(app, w, h, 29);
  const WorkGroup wg{8, 8};
  const auto host_variants =
      parse_variants(axes("rows:3,cols:4", "li", "local,global", "f32", "host"));
  const Outcome clean = test::run_through_runner(*env, {&app}, host_variants, {wg}, input.in);
  int poisoned_checked = 0;
  for (const auto& v : host_variants) {
    const auto read = elements_read_by_any(v, app.radius, wg, w, h);
    Grid poisoned = input.in;
    for (std::size_t i = 0; i < read.size(); ++i)
      if (!read[i]) poisoned.data[i] = std::numeric_limits<float>::quiet_NaN();
    const Outcome dirty = test::run_through_runner(*env, {&app}, {v}, {wg}, poisoned);
    const ResultRow* a = clean.find(app.name, v, wg);
    const ResultRow* b = dirty.find(app.name, v, wg);
    ASSERT_TRUE(a && b && a->ok() && b->ok()) << v.label() << " " << v.axes_key();
    const Grid& ca = clean.outputs.at(a->key);
    const Grid& cb = dirty.outputs.at(b->key);
    for (std::size_t i = 0; i < ca.data.size(); ++i)
      ASSERT_EQ(ca.data[i], cb.data[i]) << b->key << " " << i;
    ++poisoned_checked;
  }
  EXPECT_EQ(poisoned_checked, 4);
}

INSTANTIATE_TEST_SUITE_P(AllApps, HostPerforation, ::testing::ValuesIn(test::all_app_names()));

// --perforate host on schemes without whole kept lines: rows with a reason, not an abort.
TEST(HostPerforation, AccurateAndStencilAreNotApplicable) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("gaussian3");
  const Grid in = test::random_grid(32, 24, 3);
  const Outcome o = test::run_through_runner(
      *env, {&app}, parse_variants(axes("accurate,stencil,rows:2", "nn", "local", "f32", "host")),
      {{8, 4}}, in);
  ASSERT_EQ(o.rows.size(), 3u);
  EXPECT_EQ(o.rows[0].status, Status::kNotApplicable);
  EXPECT_NE(o.rows[0].reason.find("host perforation"), std::string::npos);
  EXPECT_EQ(o.rows[1].status, Status::kNotApplicable);
  EXPECT_EQ(o.rows[2].status, Status::kOk) << o.rows[2].reason;
}

// Every variant and shape ran in both outcomes and stored the same bits; returns the count.
int same_outputs(const AppDescriptor& app, const Outcome& x, const Outcome& y,
                 const std::vector<Variant>& vs, const std::vector<WorkGroup>& shapes,
                 const std::function<bool(const Variant&, const WorkGroup&)>& ran = {}) {
  int n = 0;
  for (const auto& v : vs)
    for (const auto& wg : shapes) {
      if (ran && !ran(v, wg)) continue;
      const ResultRow* a = x.find(app.name, v, wg);
      const ResultRow* b = y.find(app.name, v, wg);
      if (!a || !b) {
        ADD_FAILURE() << "missing row: " << v.label() << " " << v.axes_key();
        continue;
      }
      EXPECT_EQ(a->status, Status::kOk) << a->key << ": " << a->reason << a->build_log;
      EXPECT_EQ(b->status, Status::kOk) << b->key << ": " << b->reason << b->build_log;
      if (!a->ok() || !b->ok()) continue;
      const Grid& ga = x.outputs.at(a->key);
      const Grid& gb = y.outputs.at(b->key);
      EXPECT_EQ(ga.data.size(), gb.data.size()) << a->key;
      EXPECT_EQ(std::memcmp(ga.data.data(), gb.data.data(),
                            std::min(ga.data.size(), gb.data.size()) * sizeof(float)),
                0)
          << a->key;
      ++n;
    }
  return n;
}

// The half-pair build options of this device: its packed min/max where it has them (NVIDIA's
// compute capability 8.0 and up), else the emulated lanes.
std::string half_pair_ops(const ClEnv& device) {
  return device.info().nv_compute_capability >= 80 ? "" : " -DKPERF_HALF_PAIR_OPS=1";
}

// median selects on packed halves (half_pairs.cl) where a work-item computes an even number of
// outputs along x, and either every window element is a half value or the outputs are stored as
// half straight from the selection: lane 1 holds the columns VEC/2 to the right of lane 0's. The
// stored outputs are the float selection's bit for bit: every input scheme that copies elements
// (accurate, stencil, rows, cols under nn), li input schemes with half outputs (rounding and
// selection commute), an output scheme along y, both buffer load paths, half input and output,
// VEC 2, 4 and 8, odd and even PY, partial blocks.
// Where the device has no packed half min/max the emulated lanes (KPERF_HALF_PAIR_OPS=1) test
// the data flow; on NVIDIA's compute capability 8.0 and up its PTX. MEDIAN_EXPECT_PAIRS makes
// each build fail unless the kernel took the path expected of it: li input schemes and VEC 1
// keep the float selection.
TEST(HalfPairs, MedianSelectsTheFloatSelectionsElements) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("median");
  const std::string ops = half_pair_ops(*env);
  auto spec = [](const std::string& schemes, const std::string& recons,
                 const std::string& precisions, const std::string& outputs) {
    AxesSpec a = axes(schemes, recons, "local,global", precisions);
    a.outputs = outputs;
    a.output_recons = "li";
    return a;
  };
  std::vector<Variant> paired;
  for (const AxesSpec& a :
       {spec("accurate", "nn", "f16in,f16", "none"),
        spec("stencil,rows:2,cols:3", "nn", "f16", "none"),
        spec("accurate,rows:3", "nn", "f16", "rows:2"), spec("rows:2,cols:3", "li", "f16", "none")})
    for (const Variant& v : parse_variants(a)) paired.push_back(v);
  const std::vector<WorkGroup> wgs = {{8, 4, 2, 1}, {4, 2, 4, 3}, {4, 2, 8, 2}};
  // Each variant at one of the shapes in the fast tier (every shape runs for some variant).
  const test::ShapeSample sample(
      paired, [](const Variant& v) { return v.label() + v.axes_key(); }, wgs, 1, 0);
  int compared = 0, expected = 0;
  for (const auto& v : paired)
    for (const auto& wg : wgs) expected += sample(v, wg);
  // 56 wide: whole 8-wide blocks, so VEC 8 rows read wide and f16 takes the stored-bits path;
  // 45 wide (the full tier): partial blocks.
  std::vector<std::pair<int, int>> sizes = {{56, 29}};
  if (test::full_matrix()) sizes.emplace_back(45, 37);
  for (const auto& [w, h] : sizes) {
    const Grid input = test::random_grid(w, h, 31);
    const Outcome pairs = test::run_through_runner(*env, {&app}, paired, wgs, input, nullptr, 1,
                                                   KPERF_TEST_KERNEL_ROOT, false, {},
                                                   ops + " -DMEDIAN_EXPECT_PAIRS=1", sample);
    const Outcome floats = test::run_through_runner(
        *env, {&app}, paired, wgs, input, nullptr, 1, KPERF_TEST_KERNEL_ROOT, false, {},
        "-DKPERF_HALF_PAIR_OPS=0 -DMEDIAN_EXPECT_PAIRS=0", sample);
    compared += same_outputs(app, pairs, floats, paired, wgs, sample);
  }
  EXPECT_EQ(compared, static_cast<int>(sizes.size()) * expected);
  EXPECT_EQ(expected, test::full_matrix() ? 3 * 2 * 9 : 2 * 9);
  // Interpolated input lines with float outputs (f16in), interpolated outputs of interpolated
  // inputs, and one output per work-item along x (accurate, VEC 1) keep floats.
  std::vector<Variant> unpaired = parse_variants(spec("rows:2,cols:2", "li", "f16in", "none"));
  for (const Variant& v : parse_variants(spec("cols:2", "li", "f16", "rows:2")))
    unpaired.push_back(v);
  unpaired.push_back(parse_variants(spec("accurate", "nn", "f16", "none")).front());
  const Grid input = test::random_grid(52, 29, 37);
  const Outcome kept = test::run_through_runner(
      *env, {&app}, unpaired, {{8, 4, 2, 2}, {8, 4, 1, 2}}, input, nullptr, 1,
      KPERF_TEST_KERNEL_ROOT, false, {}, ops + " -DMEDIAN_EXPECT_PAIRS=0",
      [](const Variant& v, const WorkGroup& wg) {
        return (v.recon == Recon::kLi) == (wg.vec == 2);
      });
  for (const auto& row : kept.rows) EXPECT_EQ(row.status, Status::kOk) << row.key << row.build_log;
  EXPECT_EQ(kept.rows.size(), 7u);
}

// The stored-bits path (f16 on the global load path) is the one these builds take, host-packed
// rows and rows:2 li (rows mixed on the pairs, kperf_pair_mid) included, and gives the float
// selection's outputs; f16in keeps its float window.
TEST(HalfPairs, MedianStoredBitsPathGivesTheFloatSelection) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& app = find_app("median");
  const std::string ops = half_pair_ops(*env);
  const Grid wide_input = test::random_grid(64, 21, 41);
  const std::vector<WorkGroup> wide_wgs = {{4, 2, 8, 2}, {8, 2, 4, 3}};
  std::vector<Variant> bits_variants = parse_variants(axes("accurate", "nn", "global", "f16"));
  for (const Variant& v : parse_variants(axes("rows:2", "nn,li", "global", "f16", "device,host")))
    bits_variants.push_back(v);
  const Outcome bits =
      test::run_through_runner(*env, {&app}, bits_variants, wide_wgs, wide_input, nullptr, 1,
                               KPERF_TEST_KERNEL_ROOT, false, {}, ops + " -DMEDIAN_EXPECT_BITS=1");
  const Outcome bits_floats = test::run_through_runner(
      *env, {&app}, bits_variants, wide_wgs, wide_input, nullptr, 1, KPERF_TEST_KERNEL_ROOT, false,
      {}, "-DKPERF_HALF_PAIR_OPS=0 -DMEDIAN_EXPECT_BITS=0");
  EXPECT_EQ(same_outputs(app, bits, bits_floats, bits_variants, wide_wgs), 5 * 2);
  // The no-loads probe takes the stored-bits path too, its bits made from the addresses: a NaN
  // input never reaches the outputs.
  const Outcome probe = test::run_through_runner(
      *env, {&app}, bits_variants, {wide_wgs[0]}, test::random_grid(64, 21, 43, NAN, NAN), nullptr,
      1, KPERF_TEST_KERNEL_ROOT, false, {},
      ops + " -DKPERF_PROBE_NO_LOADS=1 -DMEDIAN_EXPECT_BITS=1");
  for (const auto& row : probe.rows) EXPECT_EQ(row.status, Status::kOk) << row.key << row.build_log;
  ASSERT_EQ(probe.outputs.size(), bits_variants.size());
  for (const auto& [key, out] : probe.outputs)
    for (const float x : out.data) ASSERT_TRUE(std::isfinite(x)) << key;
  const Outcome f16in = test::run_through_runner(
      *env, {&app}, parse_variants(axes("accurate", "nn", "global", "f16in")), {{4, 2, 8, 2}},
      wide_input, nullptr, 1, KPERF_TEST_KERNEL_ROOT, false, {}, ops + " -DMEDIAN_EXPECT_BITS=0");
  ASSERT_EQ(f16in.rows.size(), 1u);
  EXPECT_EQ(f16in.rows[0].status, Status::kOk) << f16in.rows[0].build_log;
}

// --transfers: every repetition has an upload, a download and the launches, each positive;
// host packing is timed where the host prepares data (packing, half conversion) and zero for
// f32 on the device; end to end is their sum; the fields reach the JSON and the speedups.
TEST(Transfers, FieldsPresentPositiveAndConsistent) {
  KPERF_REQUIRE_DEVICE();
  const AppDescriptor& gauss = find_app("gaussian3");
  const AppDescriptor& hot = find_app("hotspot");
  const HotspotInput chip = make_synthetic_chip(64, 48);
  const auto variants =
      parse_variants(axes("accurate,rows:2", "nn", "local,image", "f32,f16", "device,host"));
  for (const AppDescriptor* app : {&gauss, &hot}) {
    const Grid in = app->traits.iterated ? chip.temp : test::random_grid(64, 48, 9);
    Outcome o = test::run_through_runner(*env, {app}, variants, {{8, 4}}, in,
                                         app->traits.iterated ? &chip.power : nullptr, 2,
                                         KPERF_TEST_KERNEL_ROOT, /*transfers=*/true);
    annotate(o.rows);
    int ok = 0;
    for (const auto& r : o.rows) {
      if (!r.ok()) continue;
      ++ok;
      const auto& t = r.transfer_samples;
      ASSERT_EQ(t.end_to_end.size(), 1u) << r.key;  // one timed repetition (reps = 1)
      EXPECT_GT(t.write[0], 0u) << r.key;
      EXPECT_GT(t.read[0], 0u) << r.key;
      EXPECT_GT(t.kernel[0], 0u) << r.key;
      EXPECT_EQ(t.end_to_end[0], t.host_pack[0] + t.write[0] + t.kernel[0] + t.read[0]);
      const bool prepares = r.perforate == "host" || r.precision != "f32";
      if (prepares)
        EXPECT_GT(t.host_pack[0], 0u) << r.key;
      else
        EXPECT_EQ(t.host_pack[0], 0u) << r.key;
      const auto j = to_json(r);
      for (const char* field : {"transfer_ns", "host_pack_ns", "end_to_end_ns",
                                "transfer_samples_ns", "speedup_end_to_end"})
        EXPECT_TRUE(j.contains(field)) << r.key << " " << field;
      // The packing's floor reads the grid rows the packing reads, each once: under rows:2 on
      // the host packed line p's grid row clamp(2 p - r), else every row.
      if (prepares) {
        ASSERT_EQ(t.host_read_lines.size(), 1u) << r.key;
        EXPECT_GT(t.host_read_lines[0], 0u) << r.key;
        std::set<int> rows;
        for (int p = 0; p < in.height; ++p)
          rows.insert(r.perforate == "host" ? std::clamp(2 * p - app->radius, 0, in.height - 1)
                                            : p);
        EXPECT_EQ(t.host_read_bytes, rows.size() * in.width * sizeof(float)) << r.key;
        EXPECT_GT(j.at("host_pack").at("floor_of_memcpy").get<double>(), 0.0) << r.key;
      } else {
        EXPECT_TRUE(t.host_read_lines.empty()) << r.key;
      }
      EXPECT_GT(j.at("transfer_ns").at("write").at("median").get<double>(), 0.0);
      ASSERT_TRUE(r.speedup_end_to_end && r.speedup_transfer) << r.key;
      if (r.scheme == "accurate" && r.axes.empty()) {
        EXPECT_DOUBLE_EQ(*r.speedup_end_to_end, 1.0);
        EXPECT_DOUBLE_EQ(*r.speedup_transfer, 1.0);
      }
      const ResultRow back = row_from_json(nlohmann::json::parse(j.dump()));
      EXPECT_EQ(back.transfer_samples.end_to_end, t.end_to_end);
      EXPECT_EQ(back.transfer_samples.host_read_lines, t.host_read_lines);
      EXPECT_EQ(back.transfer_samples.host_read_bytes, t.host_read_bytes);
    }
    EXPECT_GE(ok, app->traits.iterated ? 4 : 8);
  }
}

}  // namespace
}  // namespace kperf
