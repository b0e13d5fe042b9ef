// Host unit tests: statistics, JSON rows, device selection, readers and writers, parsers, SHA-256
// and the files a program includes. No OpenCL device needed (the model and the rest:
// unit_model_tests.cpp, unit_apps_tests.cpp).
#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "app_manifest.hpp"
#include "apps.hpp"
#include "cache_probe.hpp"
#include "cl_env.hpp"
#include "cli.hpp"
#include "energy.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "metrics.hpp"
#include "program_sources.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "schemes.hpp"
#include "sha256.hpp"
#include "shard.hpp"
#include "stats.hpp"
#include "structural_axes.hpp"
#include "synthetic.hpp"
#include "test_support.hpp"
#include "tune.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;

using test::TempDir;
using test::timed_row;

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// --- statistics -----------------------------------------------------------------------------
TEST(Stats, KnownSamples) {
  const TimingStats s = summarize({10, 20, 30, 40});
  EXPECT_DOUBLE_EQ(s.median, 25);
  EXPECT_DOUBLE_EQ(s.mean, 25);
  EXPECT_DOUBLE_EQ(s.min, 10);
  EXPECT_DOUBLE_EQ(s.max, 40);
  EXPECT_NEAR(s.stddev, std::sqrt(500.0 / 3.0), 1e-9);
  EXPECT_NEAR(s.cv, std::sqrt(500.0 / 3.0) / 25.0, 1e-12);
  const TimingStats odd = summarize({5, 1, 3});
  EXPECT_DOUBLE_EQ(odd.median, 3);
  const TimingStats one = summarize({7});
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

// --- result rows ----------------------------------------------------------------------------
TEST(Results, JsonRoundTrip) {
  ResultRow r;
  r.app = "gaussian3";
  r.scheme = "rows:2";
  r.skip = 2;
  r.recon = "li";
  r.wg_x = 16;
  r.wg_y = 8;
  r.input_name = "camera";
  r.width = 512;
  r.height = 256;
  r.key = make_key(r.app, r.scheme, r.recon, "", 16, 8, 1, 1, "camera", 512, 256);
  r.samples_ns = {100, 200, 300};
  r.time = summarize(r.samples_ns);
  r.bytes_model = 1234;
  r.gbps = 4.5;
  r.copy_gbps = 9;
  r.roofline = 0.5;
  r.primary_metric = "mre";
  r.error = ErrorMetrics{0.01, 3, 0.02, 1.5, std::numeric_limits<double>::infinity(), 7, 0};
  r.speedup = 1.3;
  r.best_wg = true;
  r.output_file = "out/x.npy";
  r.kernel_info = ResultRow::KernelInfo{384, 16, 2048};
  const std::string text = to_json(r).dump();
  const ResultRow back = row_from_json(nlohmann::json::parse(text));
  EXPECT_EQ(back.key, "gaussian3/rows:2/li/wg:16x8/camera/512x256");
  EXPECT_EQ(back.samples_ns, r.samples_ns);
  EXPECT_DOUBLE_EQ(back.time->median, 200);
  EXPECT_EQ(back.error->mre_excluded, 3);
  EXPECT_TRUE(std::isinf(back.error->psnr_db));
  EXPECT_DOUBLE_EQ(*back.speedup, 1.3);
  EXPECT_FALSE(back.speedup_same_wg.has_value());
  EXPECT_TRUE(back.best_wg);
  ASSERT_TRUE(back.kernel_info);
  EXPECT_EQ(back.kernel_info->max_work_group_size, 384u);
  EXPECT_EQ(back.kernel_info->private_mem_bytes, 16u);
  EXPECT_EQ(back.kernel_info->local_mem_bytes, 2048u);
  EXPECT_EQ(back.output_file, "out/x.npy");
  EXPECT_EQ(to_json(back).dump(), text);
  EXPECT_EQ(make_key("median", "stencil", "nn", "", 32, 4, 4, 1, "x", 8, 9),
            "median/stencil/nn/wg:32x4v4/x/8x9");
  EXPECT_EQ(wg_label(8, 2, 1, 4), "8x2y4");
}

TEST(Results, VersionTwoAxesInKeysAndJson) {
  AxesSpec a;
  a.schemes = "rows1";
  a.loads = "global";
  a.outputs = "rows:2";
  a.output_recons = "li";
  a.kernel["relax"] = "none";
  const auto vs = parse_variants(a);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].axes_key(), "load:global/out:rows:2/li/fused");
  EXPECT_EQ(
      make_key("gaussian3", "rows:2", "nn", vs[0].axes_key(), 16, 8, 1, 1, "camera", 512, 512),
      "gaussian3/rows:2/nn/load:global/out:rows:2/li/fused/wg:16x8/camera/512x512");
  // The fill is an axis of its own under an output scheme, and none without one.
  a.output_fills = "fused,separate";
  const auto fills = parse_variants(a);
  ASSERT_EQ(fills.size(), 2u);
  EXPECT_EQ(fills[1].axes_key(), "load:global/out:rows:2/li/separate");
  EXPECT_NE(fills[1].build_options().find("-DKPERF_OUTPUT_FILL_FILE=output_fill_separate.cl"),
            std::string::npos);
  a.outputs = "none";
  EXPECT_THROW(parse_variants(a), std::invalid_argument);  // separate needs an output scheme
  a.output_fills = "fused";
  EXPECT_EQ(parse_variants(a).size(), 1u);
  a.output_fills = "twice";
  EXPECT_THROW(parse_variants(a), std::invalid_argument);
  // Default axes add nothing: version-1 keys are unchanged.
  EXPECT_EQ(parse_variants("rows2", "nn")[0].axes_key(), "");
  ResultRow r = timed_row("rows:2", 16, 8, 100);
  r.load = "image";
  r.kernel_axes["relax"] = "skip";
  r.axes = "load:image/relax:skip";
  r.error = ErrorMetrics{};
  r.error->wrong_fraction = 0.25;
  r.error->ssim = 0.5;
  r.error_reps = {0.1, 0.3, 0.2};
  const auto j = to_json(r);
  EXPECT_DOUBLE_EQ(j["error_spread"]["min"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["error_spread"]["max"].get<double>(), 0.3);
  const ResultRow back = row_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.load, "image");
  EXPECT_EQ(back.axes, "load:image/relax:skip");
  EXPECT_EQ(back.error_reps, r.error_reps);
  EXPECT_DOUBLE_EQ(back.error->ssim, 0.5);
  // A version-1 row reads with every new axis at its default and unmeasured new metrics.
  auto v1 = nlohmann::json::parse(to_json(timed_row("accurate", 8, 8, 10)).dump());
  for (const char* k : {"load", "output", "output_recon", "precision", "perforate", "relax",
                        "iterations_skip", "axes", "speedup_vs_global"})
    v1.erase(k);
  v1["error"] = {{"mre", 0}, {"mre_excluded", 0}, {"me", 0},
                 {"mae", 0}, {"psnr_db", "inf"},  {"max_abs", 0}};
  const ResultRow old = row_from_json(v1);
  EXPECT_EQ(old.load, "local");
  EXPECT_EQ(old.output, "none");
  EXPECT_EQ(old.output_fill, "");
  EXPECT_EQ(old.axes, "");
  EXPECT_TRUE(std::isnan(old.error->ssim));
  // Rows with an output scheme from before the fill was an axis were filled by a second launch.
  auto two_launch = nlohmann::json::parse(to_json(timed_row("accurate", 8, 8, 10)).dump());
  two_launch["output"] = "rows:2";
  two_launch["output_recon"] = "nn";
  EXPECT_EQ(row_from_json(two_launch).output_fill, "separate");
  two_launch["output_fill"] = "fused";
  EXPECT_EQ(row_from_json(two_launch).output_fill, "fused");
}

// The context's axis_defaults are the values row_from_json gives an absent field: a version-1
// row (no axis field at all) reads back, and writes out, exactly those.
TEST(Results, AxisDefaultsAreWhatAnAbsentFieldReadsAs) {
  const nlohmann::json v1 = {{"key", "gaussian3/accurate/none/wg:16x8/camera/64x64"},
                             {"app", "gaussian3"},
                             {"scheme", "accurate"},
                             {"skip", 1},
                             {"recon", "none"},
                             {"wg", {16, 8}},
                             {"input", {{"name", "camera"}, {"width", 64}, {"height", 64}}},
                             {"status", "ok"}};
  const nlohmann::ordered_json written = to_json(row_from_json(v1));
  const nlohmann::ordered_json defaults = axis_defaults_json();
  for (const std::string field :
       {"load", "output", "output_recon", "precision", "perforate", "iterations_skip"}) {
    ASSERT_TRUE(defaults.contains(field)) << field;
    EXPECT_EQ(written.at(field), defaults.at(field)) << field;
  }
  EXPECT_FALSE(written.contains("output_fill"));  // no output scheme, no fill
  for (const KernelAxis& axis : kernel_axes()) {
    ASSERT_TRUE(defaults.contains(axis.field)) << axis.field;
    EXPECT_EQ(defaults.at(axis.field).is_number(), axis.numeric_field) << axis.field;
  }
}

TEST(Results, SpeedupOverTheParaproxBaseline) {
  std::vector<ResultRow> rows = {timed_row("accurate", 16, 8, 1000),
                                 timed_row("rows:2", 16, 8, 500)};
  ResultRow global = timed_row("accurate", 16, 8, 2000);
  global.load = "global";
  global.axes = "load:global";
  ResultRow output = timed_row("accurate", 16, 8, 800);
  output.axes = "load:global/out:rows:2/nn/fused";
  rows.push_back(global);
  rows.push_back(output);
  annotate(rows);
  EXPECT_DOUBLE_EQ(*rows[1].speedup, 2.0);
  EXPECT_DOUBLE_EQ(*rows[1].speedup_vs_global, 4.0);
  EXPECT_DOUBLE_EQ(*rows[2].speedup, 0.5);  // the baseline against the local tile
  EXPECT_DOUBLE_EQ(*rows[2].speedup_vs_global, 1.0);
  EXPECT_DOUBLE_EQ(*rows[3].speedup_vs_global, 2.5);
  EXPECT_TRUE(rows[3].best_wg);  // its own group: axes are part of it
}

TEST(Results, AnnotateBestWorkGroupAndSpeedups) {
  std::vector<ResultRow> rows = {timed_row("accurate", 16, 8, 1000),
                                 timed_row("accurate", 32, 4, 800), timed_row("rows:2", 16, 8, 500),
                                 timed_row("rows:2", 32, 4, 600)};
  ResultRow failed = timed_row("rows:2", 8, 8, 1);
  failed.status = Status::kInvalidConfig;
  rows.push_back(failed);
  annotate(rows);
  EXPECT_FALSE(rows[0].best_wg);
  EXPECT_TRUE(rows[1].best_wg);
  EXPECT_TRUE(rows[2].best_wg);
  EXPECT_FALSE(rows[3].best_wg);
  EXPECT_FALSE(rows[4].best_wg);  // a failed row is never the best, however small its time
  // Papers' speedup: accurate at its best (800) over rows:2 at its best (500).
  EXPECT_DOUBLE_EQ(*rows[2].speedup, 800.0 / 500.0);
  EXPECT_DOUBLE_EQ(*rows[3].speedup, 800.0 / 500.0);
  EXPECT_DOUBLE_EQ(*rows[1].speedup, 1.0);
  EXPECT_DOUBLE_EQ(*rows[2].speedup_same_wg, 1000.0 / 500.0);
  EXPECT_DOUBLE_EQ(*rows[3].speedup_same_wg, 800.0 / 600.0);
  EXPECT_FALSE(rows[4].speedup.has_value());
}

// --- device selection -----------------------------------------------------------------------
TEST(DeviceSelector, Parsing) {
  EXPECT_EQ(parse_device_selector("").kind, DeviceSelector::Kind::kDefault);
  const auto idx = parse_device_selector("1:2");
  EXPECT_EQ(idx.kind, DeviceSelector::Kind::kIndex);
  EXPECT_EQ(idx.platform, 1);
  EXPECT_EQ(idx.device, 2);
  EXPECT_EQ(parse_device_selector("nvidia").kind, DeviceSelector::Kind::kName);
  EXPECT_EQ(parse_device_selector("1:x").kind, DeviceSelector::Kind::kName);
  EXPECT_EQ(parse_device_selector(":1").kind, DeviceSelector::Kind::kName);
}

TEST(DeviceSelector, Choosing) {
  DeviceInfo cpu, gpu;
  cpu.name = "pthread-Intel Xeon";
  cpu.type = "CPU";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.type = "GPU";
  gpu.platform_index = 1;
  const std::vector<DeviceInfo> both = {cpu, gpu};
  EXPECT_EQ(choose_device(both, parse_device_selector("")), 1u);   // first GPU
  EXPECT_EQ(choose_device({cpu}, parse_device_selector("")), 0u);  // else first device
  EXPECT_EQ(choose_device(both, parse_device_selector("h100")), 1u);
  EXPECT_EQ(choose_device(both, parse_device_selector("0:0")), 0u);
  try {
    choose_device(both, parse_device_selector("radeon"));
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("1:0 (NVIDIA H100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(choose_device(both, parse_device_selector("3:0")), DeviceError);
}

// NVIDIA's compute capability reaches every program as KPERF_NV_SM (half_pairs.cl selects its
// PTX by it) and the context as "9.0"; other devices get neither.
TEST(DeviceInfo, NvidiaComputeCapabilityIsABuildDefine) {
  DeviceInfo h200, pocl;
  h200.nv_compute_capability = 90;
  EXPECT_EQ(h200.build_defines(), " -DKPERF_NV_SM=90");
  EXPECT_EQ(to_json(h200).at("nv_compute_capability"), "9.0");
  EXPECT_EQ(pocl.build_defines(), "");
  EXPECT_FALSE(to_json(pocl).contains("nv_compute_capability"));
}

TEST(ClErrors, SymbolicNames) {
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(cl_error_name(-9999), "CL_ERROR(-9999)");
}

// --- readers and writers --------------------------------------------------------------------
TEST(Npy, WriterReadBack) {
  TempDir dir;
  Grid g = test::random_grid(7, 5, 1);
  write_npy((dir / "g.npy").string(), g);
  const Grid back = read_npy((dir / "g.npy").string());
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.data, g.data);
  const std::string bytes = read_file((dir / "g.npy").string());
  EXPECT_EQ((bytes.size() - 7 * 5 * 4) % 64, 0u);  // header padded to 64 bytes
  EXPECT_FALSE(fs::exists(dir / ("g.npy.tmp." + std::to_string(::getpid()))));
}

std::string npy_with(const std::string& descr, const std::string& shape, std::size_t payload) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size()));
  out.push_back(0);
  return out + header + std::string(payload, '\x01');
}

TEST(Npy, Uint8AndRejections) {
  TempDir dir;
  write_bytes(dir / "u8.npy", npy_with("|u1", "(2, 3)", 6));
  const Grid u8 = read_npy((dir / "u8.npy").string());
  EXPECT_EQ(u8.width, 3);
  EXPECT_EQ(u8.data[5], 1.0f);
  const std::pair<std::string, std::string> bad[] = {
      {npy_with("<f8", "(2, 3)", 48), "dtype"},
      {npy_with("<f4", "(2, 3, 4)", 96), "rank 3"},
      {npy_with("<f4", "(6,)", 24), "rank 1"},
      {npy_with(">f4", "(2, 3)", 24), "big-endian"},
      {npy_with("<f4", "(2, 3)", 10), "truncated"},
      // Regression (found by fuzz_readers): a header claiming a huge grid with no data must fail
      // on a size check, before allocating it: more elements than the kernels' 32-bit indices
      // reach, or (at the largest grid they reach either way) the missing data.
      {npy_with("<f4", "(65536, 65536)", 8), "32-bit"},
      {npy_with("<f4", "(46341, 46341)", 8), "2147488281 elements"},
      {npy_with("<f4", "(65536, 32768)", 8), "32-bit"},
      {npy_with("<f4", "(46340, 46340)", 8), "truncated"},
      {npy_with("<f4", "(65536, 32767)", 8), "truncated"},
      {std::string("not numpy at all"), "magic"},
  };
  for (const auto& [bytes, why] : bad) {
    write_bytes(dir / "bad.npy", bytes);
    try {
      read_npy((dir / "bad.npy").string());
      ADD_FAILURE() << "accepted: " << why;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos) << e.what();
    }
  }
}

TEST(Rodinia, ReadAndRejections) {
  TempDir dir;
  Grid g = test::random_grid(4, 4, 2, 300, 340);
  write_bytes(dir / "t", encode_rodinia(g));
  const Grid back = read_rodinia((dir / "t").string());
  ASSERT_EQ(back.width, 4);
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_FLOAT_EQ(back.data[i], g.data[i]);
  EXPECT_EQ(read_rodinia((dir / "t").string(), 8, 2).width, 8);
  write_bytes(dir / "five", "1\n2\n3\n4\n5\n");
  EXPECT_THROW(read_rodinia((dir / "five").string()), InputError);  // not square
  write_bytes(dir / "word", "1\n2\nabc\n4\n");
  try {
    read_rodinia((dir / "word").string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":3: not a number"), std::string::npos) << e.what();
  }
  write_bytes(dir / "empty", "");
  EXPECT_THROW(read_rodinia((dir / "empty").string()), InputError);
  EXPECT_THROW(read_rodinia((dir / "t").string(), 3, 3), InputError);  // wrong line count
}

TEST(Image, GrayAndColourPnm) {
  TempDir dir;
  // 3x2 binary PGM and a 1x1 PPM: luminance 0.299 R + 0.587 G + 0.114 B, no normalisation.
  write_bytes(dir / "g.pgm",
              std::string("P5\n3 2\n255\n") + std::string("\x00\x10\x20\x30\x40\xff", 6));
  const Grid g = read_image((dir / "g.pgm").string());
  ASSERT_EQ(g.width, 3);
  ASSERT_EQ(g.height, 2);
  EXPECT_EQ(g.at(1, 2), 255.0f);
  EXPECT_EQ(g.at(0, 1), 16.0f);
  write_bytes(dir / "c.ppm", std::string("P6\n1 1\n255\n") + std::string("\xc8\x64\x0a", 3));
  EXPECT_NEAR(read_image((dir / "c.ppm").string()).data[0], 0.299 * 200 + 0.587 * 100 + 0.114 * 10,
              1e-4);
}

std::string encoded(int comp, bool jpeg) {
  std::vector<unsigned char> pixels(64 * 48 * comp);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<unsigned char>(i * 7);
  std::string out;
  auto sink = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data),
                                           static_cast<std::size_t>(size));
  };
  if (jpeg)
    stbi_write_jpg_to_func(sink, &out, 64, 48, comp, pixels.data(), 90);
  else
    stbi_write_png_to_func(sink, &out, 64, 48, comp, pixels.data(), 64 * comp);
  return out;
}

TEST(Image, PngAndJpegRoundTripAndTruncation) {
  TempDir dir;
  for (bool jpeg : {false, true}) {
    const std::string bytes = encoded(3, jpeg);
    const std::string name = jpeg ? "x.jpg" : "x.png";
    write_bytes(dir / name, bytes);
    const Grid g = read_image((dir / name).string());
    EXPECT_EQ(g.width, 64);
    EXPECT_EQ(g.height, 48);
    write_bytes(dir / name, bytes.substr(0, bytes.size() * 2 / 3));
    EXPECT_THROW(read_image((dir / name).string()), InputError) << name;
  }
  // A PNG of one gray channel is read as-is.
  write_bytes(dir / "g.png", encoded(1, false));
  EXPECT_EQ(read_image((dir / "g.png").string()).at(0, 3), 21.0f);
}

TEST(Image, BadFilesNameTheFile) {
  TempDir dir;
  write_bytes(dir / "empty.png", "");
  write_bytes(dir / "junk.png", "this is not an image");
  write_bytes(dir / "short.pgm", std::string("P5\n30 20\n255\n") + std::string(10, 'x'));
  // Regression (fuzz_readers): a few bytes claiming a 60000x60000 image are refused before
  // decoding.
  write_bytes(dir / "huge.pgm", std::string("P5\n60000 60000\n255\n") + std::string(10, 'x'));
  for (const char* name : {"empty.png", "junk.png", "short.pgm", "huge.pgm", "missing.png"}) {
    try {
      read_image((dir / name).string());
      ADD_FAILURE() << "accepted " << name;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

TEST(Resize, BilinearHalfPixelCentres) {
  Grid g(2, 1);
  g.data = {0, 100};
  const Grid up = resize_bilinear(g, 4, 1);
  EXPECT_FLOAT_EQ(up.data[0], 0);
  EXPECT_FLOAT_EQ(up.data[1], 25);
  EXPECT_FLOAT_EQ(up.data[2], 75);
  EXPECT_FLOAT_EQ(up.data[3], 100);
  Grid flat(5, 3, 42.0f);
  for (float v : resize_bilinear(flat, 11, 7).data) EXPECT_FLOAT_EQ(v, 42.0f);
}

TEST(AtomicWrite, ReplacesWholeFileAndChecksWritability) {
  TempDir dir;
  const std::string path = (dir / "r.json").string();
  write_file_atomic(path, "old");
  write_file_atomic(path, "new contents");
  EXPECT_EQ(read_file(path), "new contents");
  EXPECT_THROW(write_file_atomic((dir / "no/such/dir/r.json").string(), "x"), std::runtime_error);
  EXPECT_THROW(check_writable((dir / "no/such/r.json").string()), std::runtime_error);
  EXPECT_THROW(check_writable(dir.path().string()), std::runtime_error);
  EXPECT_NO_THROW(check_writable(path));
}

// --- parsers --------------------------------------------------------------------------------
TEST(Parsers, WorkGroupsSizesCounts) {
  const auto wgs = parse_wg_list("16x8, 32x4,16x8");
  ASSERT_EQ(wgs.size(), 2u);
  EXPECT_EQ(wgs[1].x, 32);
  EXPECT_EQ(wgs[1].y, 4);
  for (const char* bad :
       {"0x8", "16x", "x8", "16*8", "-4x2", "16x8x2", "abc", "", "16x8,", "99999999x1"})
    EXPECT_THROW(parse_wg_list(bad), std::invalid_argument) << bad;
  EXPECT_EQ(parse_size("512"), std::make_pair(512, 512));
  EXPECT_EQ(parse_size("640x480"), std::make_pair(640, 480));
  for (const char* bad : {"0", "-5", "12x", "axb", "70000"})
    EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
  // The kernels index a grid with 32-bit int: INT_MAX elements at most, whatever the sides.
  EXPECT_EQ(parse_size("46340"), std::make_pair(46340, 46340));
  EXPECT_EQ(parse_size("65536x32767"), std::make_pair(65536, 32767));
  EXPECT_EQ(parse_size("32767x65536"), std::make_pair(32767, 65536));
  for (const char* big : {"46341", "65536x32768", "32768x65536", "65536", "46341x46341"}) {
    try {
      parse_size(big);
      ADD_FAILURE() << "accepted " << big;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("32-bit integers, so at most 2147483647"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_count("reps", "50", 1, 100), 50);
  EXPECT_THROW(parse_count("reps", "-1", 1, 100), std::invalid_argument);
  EXPECT_THROW(parse_count("reps", "0", 1, 100), std::invalid_argument);
  EXPECT_THROW(parse_count("reps", "5x", 1, 100), std::invalid_argument);
  EXPECT_EQ(spec_wg_candidates().size(), 42u);
  EXPECT_EQ(parse_vec_list("1,4,1,8"), (std::vector<int>{1, 4, 8}));
  for (const char* bad : {"3", "0", "6", "16", "x", ""})
    EXPECT_THROW(parse_vec_list(bad), std::invalid_argument) << bad;
  EXPECT_EQ(parse_py_list("1,2,8"), (std::vector<int>{1, 2, 8}));
  EXPECT_THROW(parse_py_list("0"), std::invalid_argument);
  EXPECT_THROW(parse_py_list("17"), std::invalid_argument);
  const auto crossed = with_outputs_per_item({{16, 8}, {32, 4}}, {1, 4}, {1, 2});
  ASSERT_EQ(crossed.size(), 8u);
  EXPECT_EQ(crossed[3].vec, 4);
  EXPECT_EQ(crossed[3].py, 2);
  EXPECT_EQ(crossed[3].block().x, 64);
  EXPECT_EQ(crossed[3].block().y, 16);
}

TEST(Parsers, SchemesAndReconstructions) {
  EXPECT_EQ(parse_scheme("rows1").canonical(), "rows:2");
  EXPECT_EQ(parse_scheme("rows2").canonical(), "rows:3");
  EXPECT_EQ(parse_scheme("rows:4").canonical(), "rows:4");
  EXPECT_EQ(parse_scheme("cols:3").canonical(), "cols:3");
  EXPECT_EQ(parse_scheme("stencil").canonical(), "stencil");
  for (const char* bad : {"rows:0", "rows:-2", "rows:1", "cols:x", "rows", "rows:", "stencil:2",
                          "magic", "rows:2.5"}) {
    try {
      parse_scheme(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rows:K"), std::string::npos) << e.what();
    }
  }
  const auto v = parse_variants("accurate,stencil,rows1,cols:2", "nn,li");
  std::vector<std::string> labels;
  for (const auto& x : v) labels.push_back(x.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"accurate", "stencil", "rows:2/nn", "rows:2/li",
                                              "cols:2/nn", "cols:2/li"}));
  EXPECT_THROW(parse_variants("accurate", "cubic"), std::invalid_argument);
  EXPECT_EQ(parse_variants("all", "all").size(), 12u);
  EXPECT_THROW(parse_apps("gaussian3,blur"), std::invalid_argument);
  EXPECT_EQ(parse_apps("all").size(), 8u);
}

// What main() and the supervisor read before a command parses: a flag alone or as FLAG=VALUE,
// after the command's name only.
TEST(Parsers, ArgvNamesAFlagAloneOrWithItsValue) {
  std::vector<std::string> words = {"kperf", "tune", "--budget", "0.1", "--pipeline=blur-edges"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  const int argc = static_cast<int>(argv.size());
  EXPECT_TRUE(argv_names(argc, argv.data(), {"--pipeline"}));
  EXPECT_FALSE(argv_names(argc, argv.data(), {"--pipe", "--dry-run"}));
  EXPECT_FALSE(argv_names(argc, argv.data(), {"tune"}));  // the command itself is not a flag
  words[4] = "--dry-run";
  argv[4] = words[4].data();
  EXPECT_TRUE(argv_names(argc, argv.data(), {"--help", "--dry-run"}));
}

TEST(Parsers, ApproximationAxes) {
  EXPECT_EQ(parse_output("none").canonical(), "none");
  EXPECT_EQ(parse_output("center:3").ky(), 3);
  EXPECT_EQ(parse_output("center:3").kx(), 3);
  EXPECT_EQ(parse_output("rows:2").kx(), 1);
  EXPECT_EQ(parse_output("cols:4").kx(), 4);
  for (const char* bad : {"rows", "rows:1", "rows:0", "rows:x", "diag:2", "none:2", "rows:-2", ""})
    EXPECT_THROW(parse_output(bad), std::invalid_argument) << bad;
  EXPECT_EQ(std::string(find_load("image").name), "image");
  EXPECT_THROW(find_load("texture"), std::invalid_argument);
  AxesSpec a;
  a.schemes = "accurate,rows1";
  a.loads = "local,global";
  a.outputs = "none,rows:2";
  a.output_recons = "all";
  a.kernel["relax"] = "none,skip";
  // 2 input variants x 2 loads x (none + rows:2 x {nn, li}) x 2 relaxations.
  EXPECT_EQ(parse_variants(a).size(), 2u * 2u * 3u * 2u);
  a.kernel["relax"] = "sometimes";
  EXPECT_THROW(parse_variants(a), std::invalid_argument);
  EXPECT_EQ(parse_iterations_skip_list("0,0.5,0.5").size(), 2u);
  for (const char* bad : {"1", "-0.1", "1.5", "x", "", "nan"})
    EXPECT_THROW(parse_iterations_skip_list(bad), std::invalid_argument) << bad;
  EXPECT_EQ(effective_iterations(60, 0.5), 30);
  EXPECT_EQ(effective_iterations(5, 0.5), 3);
  EXPECT_EQ(effective_iterations(3, 0.99), 1);
}
// The last-level cache from a probe's bandwidths, and the default grid it leads to.
TEST(CacheProbe, KneeOfTheBandwidthCurveAndTheGridBeyondIt) {
  constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
  // Launch overhead at 1 MiB, cache speed to 32 MiB, memory speed from 64 MiB on.
  const std::vector<CacheProbePoint> h100_like = {
      {1 * MiB, 2000},  {2 * MiB, 4000},  {4 * MiB, 6500},   {8 * MiB, 8000},  {16 * MiB, 8200},
      {32 * MiB, 8100}, {64 * MiB, 3100}, {128 * MiB, 3000}, {256 * MiB, 3000}};
  const auto cache = cache_bytes_of(h100_like);
  ASSERT_TRUE(cache);
  // The midpoint (8200 + 3000) / 2 = 5600 is crossed between 32 and 64 MiB.
  EXPECT_GT(*cache, 32 * MiB);
  EXPECT_LT(*cache, 64 * MiB);
  // A flat curve has no cache to find; nor a curve that only rises (overhead, then memory).
  EXPECT_FALSE(cache_bytes_of({{1 * MiB, 3000}, {8 * MiB, 3100}, {64 * MiB, 3000}}));
  EXPECT_FALSE(cache_bytes_of({{1 * MiB, 500}, {8 * MiB, 2000}, {64 * MiB, 3000}}));
  EXPECT_FALSE(cache_bytes_of({{1 * MiB, 8000}, {8 * MiB, 3000}}));  // too few points
  // 50 MB holds a 512^2 grid (2 MiB in and out) and 2048^2's input (16 MiB), not 4096^2's.
  EXPECT_EQ(memory_bound_side(50'000'000, 80ull << 30), 4096);
  EXPECT_EQ(memory_bound_side(10 * MiB, 80ull << 30), 2048);
  // A cache that does not hold the default grid: that grid already measures memory.
  EXPECT_FALSE(memory_bound_side(1 * MiB, 80ull << 30));
  // A 300 MiB cache needs 16384^2; with 4 GiB of memory 8192^2 is the largest that fits.
  EXPECT_EQ(memory_bound_side(300 * MiB, 80ull << 30), 16384);
  EXPECT_EQ(memory_bound_side(300 * MiB, 4ull << 30), 8192);
}

// FIPS 180-4's known answers: one block, two blocks (the padding spills into a second), and a
// million bytes fed in pieces that straddle the 64-byte blocks.
TEST(Provenance, Sha256KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  for (int i = 0; i < 1000; ++i) million.update(std::string(1000, 'a'));
  EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The digest of context.sources is the SHA-256 of sha256sum's lines in path order.
TEST(Provenance, SourcesDigestIsSha256sumOfSortedLines) {
  const std::string a = sha256_hex("A"), b = sha256_hex("B");
  EXPECT_EQ(sources_sha256({{"schemes/b.cl", b}, {"kernels/a.cl", a}}),
            sha256_hex(a + "  kernels/a.cl\n" + b + "  schemes/b.cl\n"));
  EXPECT_NE(sources_sha256({{"kernels/a.cl", a}}), sources_sha256({{"kernels/a.cl", b}}));
  EXPECT_NE(sources_sha256({{"kernels/a.cl", a}}), sources_sha256({{"kernels/c.cl", a}}));
}

// The digest of context.builds: sources_sha256's lines, then "<source>  <options>" per build in
// order; other options, or another text under the same options, change it.
TEST(Provenance, BuildsDigestIsSourcesLinesThenBuildLines) {
  const std::string a = sha256_hex("A"), b = sha256_hex("B");
  const std::map<std::string, std::string> sources = {{"kernels/a.cl", a}, {"schemes/b.cl", b}};
  const std::set<std::pair<std::string, std::string>> builds = {
      {"kernels/a.cl", "-I schemes -DWG_X=8"}, {"kernels/a.cl", "-I schemes -DWG_X=16"}};
  EXPECT_EQ(builds_sha256(sources, builds),
            sha256_hex(a + "  kernels/a.cl\n" + b + "  schemes/b.cl\n" +
                       "kernels/a.cl  -I schemes -DWG_X=16\nkernels/a.cl  -I schemes -DWG_X=8\n"));
  EXPECT_NE(builds_sha256(sources, builds),
            builds_sha256(sources, {{"kernels/a.cl", "-I schemes -DWG_X=8 -DKPERF_NV_SM=90"},
                                    {"kernels/a.cl", "-I schemes -DWG_X=16"}}));
  EXPECT_NE(builds_sha256(sources, builds),
            builds_sha256({{"kernels/a.cl", b}, {"schemes/b.cl", b}}, builds));
}

// Includes are found as the preprocessor finds them: a macro's file from -D before the source's
// own default, the including file's folder before the -I folders, each file once.
TEST(Provenance, ProgramSourcesFollowIncludesAndFileMacros) {
  TempDir dir;
  const fs::path a = dir.path() / "a", b = dir.path() / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  write_bytes(a / "tile.cl",
              "#ifndef LOAD_FILE\n#define LOAD_FILE load_a.cl\n#endif\n#define STR_(x) #x\n"
              "#define STR(x) STR_(x)\n#include STR(LOAD_FILE)\n  #  include \"common.cl\"\n"
              "#include \"tile.cl\"\n#include \"absent.cl\"\n");
  write_bytes(a / "load_a.cl", "// a\n");
  write_bytes(a / "load_b.cl", "// b\n");
  write_bytes(a / "common.cl", "#include \"near.cl\"\n");
  write_bytes(a / "near.cl", "// beside common.cl\n");
  write_bytes(b / "near.cl", "// on the second -I folder\n");
  const std::string top = "#include \"tile.cl\"\n__kernel void k() {}\n";
  const std::string dirs = "-I " + a.string() + " -I" + b.string();
  auto files = [](const ProgramSources& p) {
    std::map<std::string, std::string> out;
    for (const auto& [path, sha] : p.includes)
      out[fs::path(path).filename().string() + "@" +
          fs::path(path).parent_path().filename().string()] = sha;
    return out;
  };
  const ProgramSources with_b = program_sources(top, dirs + " -DLOAD_FILE=load_b.cl -DWG_X=8");
  EXPECT_EQ(with_b.source_sha256, sha256_hex(top));
  const std::map<std::string, std::string> expected = {
      {"tile.cl@a", sha256_hex(read_file((a / "tile.cl").string()))},
      {"load_b.cl@a", sha256_hex("// b\n")},
      {"common.cl@a", sha256_hex("#include \"near.cl\"\n")},
      {"near.cl@a", sha256_hex("// beside common.cl\n")}};
  EXPECT_EQ(files(with_b), expected);
  for (const auto& [path, sha] : with_b.includes) EXPECT_TRUE(fs::path(path).is_absolute()) << path;
  const auto with_default = files(program_sources(top, dirs + " -DWG_X=8"));
  EXPECT_TRUE(with_default.count("load_a.cl@a"));
  EXPECT_FALSE(with_default.count("load_b.cl@a"));
}

// A built-in app with a scheme and a precision: the files its -D options name and what they
// include, and none of the other values' files.
TEST(Provenance, ProgramSourcesOfAnApp) {
  const std::string root = KPERF_TEST_KERNEL_ROOT;
  const ProgramSources p =
      program_sources(read_file(root + "/kernels/gaussian3.cl"),
                      "-cl-std=CL1.2 -I " + root +
                          "/schemes -DKPERF_SCHEME_FILE=scheme_rows.cl "
                          "-DKPERF_PRECISION_FILE=precision_bf16.cl -DWG_X=16 -DWG_Y=8");
  std::set<std::string> names;
  for (const auto& [path, sha] : p.includes) {
    names.insert(fs::path(path).filename().string());
    EXPECT_EQ(sha, sha256_hex(read_file(path))) << path;
  }
  for (const char* f : {"kperf_tile.cl", "kperf_windows.cl", "kperf_outputs.cl", "kperf_kernels.cl",
                        "scheme_rows.cl", "perforate_lines.cl", "precision_bf16.cl",
                        "load_local.cl", "perforate_device.cl", "output_none.cl"})
    EXPECT_TRUE(names.count(f)) << f;
  for (const char* f : {"scheme_accurate.cl", "precision_f32.cl", "precision_f16.cl",
                        "load_global.cl", "output_grid.cl"})
    EXPECT_FALSE(names.count(f)) << f;
}
}  // namespace
}  // namespace kperf
