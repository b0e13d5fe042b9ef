// Host unit tests: statistics, JSON rows, device selection, readers/writers, parsers, metrics,
// result annotation, generators and the CPU scheme model. No OpenCL device needed.
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

namespace fs = std::filesystem;

using test::TempDir;

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

ResultRow timed_row(const std::string& scheme, int wx, int wy, double median) {
  ResultRow r;
  r.app = "sobel3";
  r.scheme = scheme;
  r.recon = scheme == "accurate" ? "none" : "nn";
  r.wg_x = wx;
  r.wg_y = wy;
  r.input_name = "in";
  r.width = r.height = 64;
  r.key = make_key(r.app, r.scheme, r.recon, "", wx, wy, 1, 1, "in", 64, 64);
  r.samples_ns = {static_cast<std::uint64_t>(median)};
  r.time = summarize(r.samples_ns);
  return r;
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
  failed.status = "invalid_config";
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
      // Regression (found by fuzz_readers): a header claiming 65536x65536 floats with no data
      // must fail on the size check, before allocating 16 GiB.
      {npy_with("<f4", "(65536, 65536)", 8), "truncated"},
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
          EXPECT_EQ(verdict->status, "not_applicable");
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
  EXPECT_EQ(check_variant(parse_scheme("stencil"), 0, {16, 8})->status, "not_applicable");
  EXPECT_FALSE(check_variant(parse_scheme("stencil"), 1, {16, 8}));
  // rows:4 needs a tile height of at least 4: wy 1 + 2r (r = 1) = 3 is too short.
  const auto v = check_variant(parse_scheme("rows:4"), 1, {16, 1});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->status, "invalid_config");
  EXPECT_NE(v->reason.find("height 3"), std::string::npos) << v->reason;
  EXPECT_FALSE(check_variant(parse_scheme("rows:3"), 1, {16, 1}));
  EXPECT_EQ(check_variant(parse_scheme("cols:4"), 0, {2, 8})->status, "invalid_config");
}

TEST(Model, BytesModelCountsDistinctReads) {
  Variant rows2 = parse_scheme("rows:2");
  // Radius 1, 8 rows: kept global rows are odd ones plus row -1 (clamped to 0): 0,1,3,5,7.
  EXPECT_DOUBLE_EQ(distinct_elements_read(rows2, 1, {4, 4}, 10, 8), 5.0 * 10);
  EXPECT_DOUBLE_EQ(distinct_elements_read(parse_scheme("stencil"), 2, {4, 4}, 10, 8), 80.0);
  EXPECT_DOUBLE_EQ(distinct_elements_read(parse_scheme("accurate"), 0, {4, 4}, 10, 8), 80.0);
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
  EXPECT_EQ(too_many->status, "invalid_config");
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
            "not_applicable");
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

namespace kperf {
namespace {

std::string manifest_error(const std::string& source) {
  try {
    parse_app_manifest(source, "dir/app.cl");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(AppManifest, ParsesEveryKey) {
  const AppManifest m = parse_app_manifest(
      "// blur: a comment line\n//\n// @name my_blur2\n// @radius 2\n// @metric me\n"
      "// @range -1 255.5\n// @summary a 5x5 blur\n// @accurate global\n\n"
      "#define RADIUS 2\n#include \"kperf_tile.cl\"\n// @name not_read: past the first block\n",
      "app.cl");
  EXPECT_EQ(m.name, "my_blur2");
  EXPECT_EQ(m.radius, 2);
  EXPECT_EQ(m.metric, "me");
  ASSERT_TRUE(m.range);
  EXPECT_EQ(m.range->first, -1.0);
  EXPECT_EQ(m.range->second, 255.5);
  EXPECT_EQ(m.summary, "a 5x5 blur");
  EXPECT_FALSE(m.accurate_uses_tile);
  const AppManifest d = parse_app_manifest("// @name a\n// @radius 0\n#define RADIUS 0\n", "a.cl");
  EXPECT_EQ(d.metric, "mre");
  EXPECT_FALSE(d.range);
  EXPECT_TRUE(d.accurate_uses_tile);
}

TEST(AppManifest, Rejections) {
  const std::string define1 = "#define RADIUS 1\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"// no manifest here\n" + define1, "no manifest"},
      {"#define RADIUS 1\n// @name late\n// @radius 1\n", "no manifest"},
      {"// @radius 1\n" + define1, "has no @name"},
      {"// @name a\n" + define1, "has no @radius"},
      {"// @name a\n// @radius 9\n#define RADIUS 9\n", "@radius '9' must be an integer in 0..8"},
      {"// @name a\n// @radius -1\n" + define1, "must be an integer in 0..8"},
      {"// @name a\n// @radius 1.5\n" + define1, "must be an integer in 0..8"},
      {"// @name a\n// @radius 2\n" + define1,
       "@radius 2 differs from the kernel's #define RADIUS 1"},
      {"// @name a\n// @radius 1\n", "no '#define RADIUS N'"},
      {"// @name 9lives\n// @radius 1\n" + define1, "@name '9lives' must be"},
      {"// @name a\n// @name b\n// @radius 1\n" + define1, "@name is given twice"},
      {"// @name a\n// @radius 1\n// @colour red\n" + define1, "unknown manifest key @colour"},
      {"// @name a\n// @radius 1\n// @metric psnr\n" + define1, "@metric 'psnr' must be mre or me"},
      {"// @name a\n// @radius 1\n// @range 5 1\n" + define1, "@range '5 1' must be two numbers"},
      {"// @name a\n// @radius 1\n// @accurate maybe\n" + define1, "must be tile or global"},
  };
  for (const auto& [source, problem] : cases) {
    const std::string message = manifest_error(source);
    EXPECT_NE(message.find("app file dir/app.cl: "), std::string::npos) << source << message;
    EXPECT_NE(message.find(problem), std::string::npos) << source << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(AppManifest, BuiltinsReadTheirManifests) {
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  EXPECT_EQ(app_registry().size(), 8u);
  EXPECT_EQ(find_app("sobel3").primary_metric, Metric::kMe);
  EXPECT_EQ(find_app("gaussian5").radius, 2);
  EXPECT_FALSE(find_app("inversion").accurate_uses_tile);
  EXPECT_TRUE(find_app("median").accurate_uses_tile);
  EXPECT_EQ(find_app("bilateral").summary, "5x5 round-window bilateral filter (OpenCV semantics)");
  for (const AppDescriptor& app : app_registry()) {
    EXPECT_EQ(app.kernel_file, app.name + ".cl");
    EXPECT_FALSE(app.user()) << app.name;  // every built-in keeps its C++ reference
  }
  EXPECT_TRUE(find_app("hotspot").traits.iterated);
  // A kernel directory whose built-in lost its manifest is refused, naming the file.
  TempDir dir;
  fs::create_directories(dir / "kernels");
  for (const auto& entry : fs::directory_iterator(fs::path(KPERF_TEST_KERNEL_ROOT) / "kernels"))
    fs::copy(entry.path(), dir / "kernels" / entry.path().filename().string());
  std::ofstream(dir / "kernels" / "median.cl") << "#define RADIUS 1\n";
  try {
    load_builtin_apps(dir.path().string());
    ADD_FAILURE() << "a built-in without a manifest loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("median.cl: no manifest"), std::string::npos) << e.what();
  }
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
}

TEST(AppManifest, NamesCollide) {
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);
  TempDir dir;
  auto write = [&](const std::string& file, const std::string& name) {
    std::ofstream(dir / file) << "// @name " << name << "\n// @radius 1\n#define RADIUS 1\n";
    return (dir / file).string();
  };
  const AppDescriptor& mine = add_user_app(write("mine.cl", "mine"));
  EXPECT_TRUE(mine.user());
  EXPECT_EQ(&find_app("mine"), &mine);
  EXPECT_TRUE(fs::path(mine.kernel_file).is_absolute());
  auto error_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string again = write("again.cl", "mine");
  EXPECT_NE(error_of([&] { add_user_app(again); }).find("@name mine is taken by the user app in"),
            std::string::npos);
  const std::string builtin = write("builtin.cl", "median");
  EXPECT_NE(error_of([&] { add_user_app(builtin); }).find("@name median is taken by a built-in"),
            std::string::npos);
  EXPECT_NE(error_of([&] { add_user_app((dir / "absent.cl").string()); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([&] { add_user_app(dir.path().string()); }).find("not a regular file"),
            std::string::npos);
  TempDir empty;
  EXPECT_NE(error_of([&] { add_user_app_dir(empty.path().string()); }).find("holds no .cl file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { add_user_app_dir(again); }).find("not a directory"), std::string::npos);
  load_builtin_apps(KPERF_TEST_KERNEL_ROOT);  // drops the user apps
  EXPECT_THROW(find_app("mine"), std::invalid_argument);
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

// A counter of a constant power that updates every `period` seconds of a simulated clock, and
// wraps at `wrap` joules (0: never), as NVML's and RAPL's counters do.
class FakeCounter : public EnergyCounter {
 public:
  FakeCounter(const double& clock, double watts, double period, double wrap = 0)
      : clock_(clock), watts_(watts), period_(period), wrap_(wrap) {}
  std::string source() const override { return "fake"; }
  std::optional<double> read_joules() override {
    const double updates = std::floor(clock_ / period_);
    const double joules = updates * period_ * watts_;
    return wrap_ > 0 ? std::fmod(joules, wrap_) : joules;
  }
  nlohmann::ordered_json describe() const override { return {{"fake", true}}; }
  double watts_;

 private:
  const double& clock_;
  double period_, wrap_;
};

// Times are powers of two so the simulated clock lands exactly on the counter's updates.
constexpr double kPeriod = 0.125, kStep = 1.0 / 128;

TEST(Energy, ConstantPowerGivesPowerTimesTime) {
  double clock = 0.01;
  FakeCounter counter(clock, 80.0, kPeriod);
  EnergyMeter meter(counter, [&] { return clock; }, {1.0, 3, 10});
  auto launches = [&]() -> long long {
    clock += kStep;
    return 4;
  };
  std::string problem;
  const auto windows = meter.measure(launches, problem);
  EXPECT_EQ(problem, "");
  ASSERT_EQ(windows.size(), 3u);
  for (const EnergyWindow& w : windows) {
    EXPECT_GE(w.seconds, 1.0);
    EXPECT_DOUBLE_EQ(w.joules, 80.0 * w.seconds);  // the window starts and ends on updates
    EXPECT_EQ(w.launches, static_cast<long long>(std::llround(w.seconds / kStep)) * 4);
  }
  EXPECT_DOUBLE_EQ(meter.update_period_s(), kPeriod);
}

TEST(Energy, WrapInsideAWindowTakesAnotherNeverANegativeEnergy) {
  double clock = 0;
  // Wraps every 250 J: about every third 1-second window at 80 W crosses it.
  FakeCounter counter(clock, 80.0, kPeriod, 250.0);
  EnergyMeter meter(counter, [&] { return clock; }, {1.0, 5, 20});
  auto launches = [&]() -> long long {
    clock += kStep;
    return 1;
  };
  std::string problem;
  const auto windows = meter.measure(launches, problem);
  ASSERT_EQ(windows.size(), 5u);
  for (const EnergyWindow& w : windows) {
    EXPECT_GT(w.joules, 0);
    EXPECT_DOUBLE_EQ(w.joules, 80.0 * w.seconds);
  }
  EXPECT_GE(clock, 7.0);  // the invalid windows were measured and dropped, not shortened
}

TEST(Energy, StuckCounterGivesUpWithAReason) {
  double clock = 0;
  FakeCounter counter(clock, 0.0, kPeriod);  // never moves
  EnergyMeter meter(counter, [&] { return clock; }, {0.5, 2, 3});
  std::string problem;
  const auto windows = meter.measure(
      [&]() -> long long {
        clock += kStep;
        return 1;
      },
      problem);
  EXPECT_TRUE(windows.empty());
  EXPECT_NE(problem.find("did not change"), std::string::npos) << problem;
}

TEST(Energy, IdleSubtractionAndPerOutputEnergy) {
  double clock = 0;
  FakeCounter counter(clock, 50.0, kPeriod);
  EnergyMeter meter(counter, [&] { return clock; }, {1.0, 3, 10});
  std::string problem;
  auto idle_windows = meter.measure(
      [&]() -> long long {
        clock += kStep;
        return 0;
      },
      problem);
  ASSERT_EQ(idle_windows.size(), 3u);
  const double idle_w = idle_windows[0].joules / idle_windows[0].seconds;
  EXPECT_DOUBLE_EQ(idle_w, 50.0);
  counter.watts_ = 80.0;  // a load: 10 launches per step
  const auto busy = meter.measure(
      [&]() -> long long {
        clock += kStep;
        return 10;
      },
      problem);
  const nlohmann::ordered_json e = energy_json(busy, idle_w, 1000.0, "fake", 1.0);
  const double launches_per_s = 10 / kStep;
  EXPECT_DOUBLE_EQ(e["j_per_launch"].get<double>(), 80.0 / launches_per_s);
  EXPECT_DOUBLE_EQ(e["dynamic_j_per_launch"].get<double>(), 30.0 / launches_per_s);
  EXPECT_DOUBLE_EQ(e["avg_power_w"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(e["nj_per_output"].get<double>(), 80.0 / launches_per_s / 1000.0 * 1e9);
  EXPECT_EQ(e["windows"].size(), 3u);
  EXPECT_FALSE(e["throttled"].get<bool>());
  EXPECT_TRUE(energy_json({}, idle_w, 1000.0, "fake", 1.0).is_null());
}

TEST(Energy, ThrottleReasonsAndSpecs) {
  ClockState c;
  c.reasons = 0x1;  // idle: not throttling
  EXPECT_FALSE(c.throttled());
  c.reasons = 0x1 | 0x40;
  EXPECT_TRUE(c.throttled());
  EXPECT_EQ(c.reason_names(), "gpu_idle,hw_thermal");
  for (const char* good : {"none", "auto", "nvml", "powercap", "hwmon:/sys/x/energy1_input"})
    EXPECT_NO_THROW(check_energy_spec(good)) << good;
  for (const char* bad : {"", "rapl", "hwmon:", "NVML"})
    EXPECT_THROW(check_energy_spec(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

TEST(Shard, ParsesIOverNAndRejectsTheRest) {
  const ShardSpec s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_TRUE(s.active());
  EXPECT_FALSE(parse_shard("0/1").active());
  for (const char* bad : {"5/5", "0/0", "-1/3", "1", "a/b", "1/2/3", "", "1/", "/2"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

TEST(Shard, PartitionIsDeterministicCompleteAndBalanced) {
  std::vector<ShardUnit> units;
  for (int i = 0; i < 40; ++i)
    units.push_back({"app" + std::to_string(i % 4) + "/v" + std::to_string(i), 1.0 + i % 7});
  const std::vector<int> a = assign_shards(units, 4);
  std::vector<ShardUnit> reversed(units.rbegin(), units.rend());
  const std::vector<int> b = assign_shards(reversed, 4);
  std::vector<double> load(4, 0);
  for (std::size_t i = 0; i < units.size(); ++i) {
    ASSERT_GE(a[i], 0);
    ASSERT_LT(a[i], 4);
    EXPECT_EQ(a[i], b[units.size() - 1 - i]) << units[i].id;  // the order given does not matter
    load[static_cast<std::size_t>(a[i])] += units[i].cost;
  }
  const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*hi - *lo, 7.0);  // at most the largest unit apart
}

// A shard that holds a unit of an app whose accurate kernel is elsewhere measures that kernel
// again: apps stay whole where that balances, and are split, paying the copies, where it does not.
TEST(Shard, AppsStayWithTheirBaselines) {
  auto measured = [](const std::vector<ShardUnit>& units, int count) {
    const std::vector<int> shard = assign_shards(units, count);
    std::vector<double> load(static_cast<std::size_t>(count), 0);
    std::map<std::string, std::set<int>> where, baseline_on;
    for (std::size_t i = 0; i < units.size(); ++i) {
      load[static_cast<std::size_t>(shard[i])] += units[i].cost;
      (units[i].baseline ? baseline_on : where)[units[i].app].insert(shard[i]);
    }
    double copies = 0;
    for (const auto& [app, shards] : where)
      for (int s : shards)
        if (!baseline_on[app].count(s)) {
          load[static_cast<std::size_t>(s)] += 36;  // the app's accurate kernel again
          ++copies;
        }
    return std::make_pair(load, copies);
  };
  std::vector<ShardUnit> six_apps;
  for (const char* app : {"gaussian3", "gaussian5", "sobel3", "sobel5", "median", "inversion"}) {
    six_apps.push_back({std::string(app) + "/accurate/none", 36, app, true});
    for (const char* v : {"stencil/nn", "rows:2/nn", "rows:3/nn"})
      six_apps.push_back({std::string(app) + "/" + v, 36, app, false});
  }
  for (int count : {2, 3}) {
    const auto [load, copies] = measured(six_apps, count);
    EXPECT_EQ(copies, 0) << count << " shards";
    for (double l : load) EXPECT_EQ(l, 24.0 * 36 / count) << count << " shards";
  }
  // One app over three shards: its units spread, each other shard measuring one copy.
  std::vector<ShardUnit> one_app = {{"median/accurate/none", 36, "median", true}};
  for (int i = 0; i < 11; ++i)
    one_app.push_back({"median/v" + std::to_string(i), 36, "median", false});
  const auto [load, copies] = measured(one_app, 3);
  EXPECT_EQ(copies, 2);
  const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*hi - *lo, 36.0);
}

}  // namespace
}  // namespace kperf
