// Command-line tests of the built binary: binary cache and compile workers, metrics on the
// device, kperf tune's bad input and early ends, grids too large to index, resume rules, host
// errors as rows, devices and energy.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "stats.hpp"
#include "test_support.hpp"

namespace kperf {
namespace {

namespace fs = std::filesystem;

using test::BadCase;
using test::CliRun;
using test::kperf_cli;
using test::one_line;
using test::result_keys;
using test::TempDir;

TEST(Cli, BinaryCacheStoresThenLoadsAndMissesOnEditedSources) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  fs::create_directories(dir / "root");
  fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / "kernels", dir / "root/kernels",
           fs::copy_options::recursive);
  fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / "schemes", dir / "root/schemes",
           fs::copy_options::recursive);
  auto run = [&](const std::string& name) {
    const CliRun r = kperf_cli(
        "run --apps gaussian3 --schemes accurate,rows:2 --recon nn,li --wg 8x8 --size 40x24 "
        "--warmup 0 --reps 1 --metrics-on host --quiet --kernel-dir " +
            (dir / "root").string() + " --binary-cache " + (dir / "cache").string() + " --out " +
            (dir / name).string(),
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(read_file((dir / name).string()));
  };
  const auto first = run("a.json"), second = run("b.json");
  // Four programs: the three variants and the copy kernel of the bandwidth measurement (the
  // metrics stay on the host, whose programs a GPU would otherwise add).
  EXPECT_EQ(first["context"]["binary_cache"]["stores"], 4);
  EXPECT_EQ(first["context"]["binary_cache"]["hits"], 0);
  EXPECT_EQ(second["context"]["binary_cache"]["hits"], 4);
  EXPECT_EQ(second["context"]["binary_cache"]["stores"], 0);
  ASSERT_EQ(first["results"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(second["results"][i]["status"], "ok");
    EXPECT_EQ(first["results"][i]["error"], second["results"][i]["error"])
        << first["results"][i]["key"];
  }
  {
    std::ofstream edit((dir / "root/schemes/scheme_rows.cl").string(), std::ios::app);
    edit << "\n// an edit\n";
  }
  const auto third = run("c.json");
  EXPECT_EQ(third["context"]["binary_cache"]["hits"], 0);
  EXPECT_EQ(third["context"]["binary_cache"]["stores"], 4);
}

TEST(Cli, CompileWorkersGiveTheSameRowsAndReportBuildFailures) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  fs::create_directories(dir / "root");
  for (const char* sub : {"kernels", "schemes"})
    fs::copy(fs::path(KPERF_TEST_KERNEL_ROOT) / sub, dir / "root" / sub,
             fs::copy_options::recursive);
  {
    std::ofstream broken((dir / "root/kernels/sobel3.cl").string(), std::ios::trunc);
    // The manifest stays readable: the kernel itself does not compile.
    broken << "// @name sobel3\n// @radius 1\n#define RADIUS 1\n#include \"kperf_tile.cl\"\n"
              "this is not OpenCL C;\n";
  }
  fs::create_directories(dir / "tmp");
  auto run = [&](const std::string& workers, const std::string& name,
                 const std::string& extra = "") {
    const CliRun r = kperf_cli(
        "run --apps gaussian3,sobel3 --schemes accurate,stencil,rows:2 --wg 8x8,16x4 "
        "--size 40x24 --warmup 0 --reps 1 --quiet --kernel-dir " +
            (dir / "root").string() + " --out " + (dir / name).string() + extra,
        dir,
        // Without the suite's shared binary cache: the workers must compile every program.
        "env -u KPERF_BINARY_CACHE TMPDIR=" + (dir / "tmp").string() +
            " KPERF_COMPILE_WORKERS=" + workers);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(read_file((dir / name).string()));
  };
  const auto in_process = run("0", "a.json"), workers = run("2", "b.json");
  EXPECT_EQ(in_process["context"]["harness"]["compile_workers"]["processes"], 0);
  EXPECT_EQ(workers["context"]["harness"]["compile_workers"]["processes"], 2);
  EXPECT_EQ(workers["context"]["harness"]["compile_workers"]["programs"], 12);
  EXPECT_EQ(workers["context"]["harness"]["compile_workers"]["starts"], 2);
  // With a binary cache of the user's the workers get its salt (every kernel file's contents):
  // they store gaussian3's 6 programs and this process loads them.
  const auto cached = run("2", "c.json", " --binary-cache " + (dir / "binaries").string());
  EXPECT_EQ(cached["context"]["harness"]["compile_workers"]["programs"], 12);
  EXPECT_EQ(cached["context"]["binary_cache"]["hits"], 6);
  EXPECT_LE(cached["context"]["binary_cache"]["stores"], 1);  // the copy kernel, built apart
  ASSERT_EQ(in_process["results"].size(), 12u);
  ASSERT_EQ(workers["results"].size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    const auto &a = in_process["results"][i], &b = workers["results"][i];
    EXPECT_EQ(a["key"], b["key"]);
    EXPECT_EQ(a["status"], b["status"]) << a["key"];
    if (a["app"] == "sobel3") {
      EXPECT_EQ(b["status"], "build_failed") << b["key"];
      EXPECT_FALSE(b.value("build_log", std::string()).empty()) << b["key"];
    } else {
      EXPECT_EQ(b["status"], "ok") << b["key"];
      EXPECT_EQ(a["error"], b["error"]) << a["key"];
    }
  }
  // The scratch directory (worker jobs, binaries, JIT cache) goes with the process.
  EXPECT_TRUE(fs::is_empty(dir / "tmp"));
}

TEST(Cli, MetricsOnTheDeviceEqualTheHostsWithoutDownloadingOutputs) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  auto run = [&](const std::string& where) {
    const CliRun r = kperf_cli(
        "run --apps gaussian3,hotspot,bilateral --schemes accurate,stencil,rows:2 --precision "
        "f32,f16 --wg 16x8 --size 48x40 --warmup 0 --reps 1 --quiet --metrics-on " +
            where + " --out " + (dir / (where + ".json")).string(),
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(read_file((dir / (where + ".json")).string()));
  };
  const auto host = run("host"), device = run("device");
  EXPECT_EQ(host["context"]["harness"]["metrics"]["on"], "host");
  EXPECT_EQ(device["context"]["harness"]["metrics"]["on"], "device");
  ASSERT_EQ(host["results"].size(), device["results"].size());
  ASSERT_EQ(host["results"].size(), 18u);
  for (std::size_t i = 0; i < host["results"].size(); ++i) {
    const auto &a = host["results"][i], &b = device["results"][i];
    ASSERT_EQ(a["status"], "ok") << a["key"];
    ASSERT_EQ(b["status"], "ok") << b["key"];
    for (const char* m : {"mre", "me", "mae", "max_abs", "wrong_fraction", "ssim"}) {
      const double x = a["error"][m].get<double>(), y = b["error"][m].get<double>();
      EXPECT_NEAR(x, y, 1e-10 * std::max(1.0, std::fabs(x))) << a["key"] << " " << m;
    }
  }
}

TEST(Cli, TuneBadInputGetsOneLineAndNoOutput) {
  TempDir dir;
  const fs::path photos = fs::path(KPERF_TEST_SOURCE_DIR) / "datasets" / "images";
  for (const char* sub : {"train", "test", "mixed", "empty"}) fs::create_directories(dir / sub);
  fs::copy_file(photos / "camera.png", dir / "train" / "camera.png");
  fs::copy_file(photos / "coins.png", dir / "train" / "coins.png");
  fs::copy_file(photos / "moon.png", dir / "test" / "moon.png");
  fs::copy_file(photos / "camera.png", dir / "mixed" / "camera.png");
  fs::copy_file(photos / "chelsea.png", dir / "mixed" / "chelsea.png");
  fs::create_directories(dir / "bad");
  std::ofstream(dir / "bad" / "broken.png") << "not a png";
  const std::string d = dir.path().string();
  const std::string io = " --train " + d + "/mixed --test " + d + "/test --out " + d + "/t.json";
  const std::vector<std::pair<std::string, std::string>> tune_cases = {
      {"tune --train x --test y", "kperf tune needs --budget"},
      {"tune --budget 0.02 --test " + d + "/test", "kperf tune needs --train"},
      {"tune --budget 0 --size 64" + io, "invalid --budget '0' (expected a fraction in (0, 1]"},
      {"tune --budget 1.5 --size 64" + io, "invalid --budget '1.5'"},
      {"tune --budget 2% --size 64" + io, "invalid --budget '2%'"},
      {"tune --budget 0.02,nan --size 64" + io, "invalid --budget 'nan'"},
      {"tune --budget 0.02" + io, "images differ in size (camera is 512x512, chelsea is"},
      {"tune --budget 0.02 --train " + d + "/empty --test " + d + "/test",
       "--train " + d + "/empty: directory holds no image"},
      {"tune --budget 0.02 --train " + d + "/nothing-here --test " + d + "/test",
       "--train " + d + "/nothing-here: not a directory"},
      {"tune --budget 0.02 --train " + d + "/mixed --test " + d + "/empty --size 64",
       "--test " + d + "/empty: directory holds no image"},
      {"tune --budget 0.02 --train " + d + "/bad --test " + d + "/test", "not a readable image"},
      {"tune --budget 0.02 --train " + d + "/mixed --test " + d + "/mixed --size 64",
       "is in both --train and --test"},
      {"tune --budget 0.02 --apps hotspot --size 64" + io, "kperf tune takes image apps"},
      {"tune --budget 0.02 --precision f64 --size 64" + io, "unknown --precision 'f64'"},
      // Given by the user, a fill with no output scheme is refused (the default fills are not).
      {"tune --budget 0.02 --output none --output-fill shared --size 64" + io,
       "--output-fill shared needs an output scheme"},
      {"tune --budget 0.02 --resume --size 64 --train " + d + "/mixed --test " + d + "/test",
       "--resume needs --out"},
  };
  for (const auto& [args, expect] : tune_cases) {
    const CliRun r = kperf_cli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(one_line(r.err)) << args << " -> [" << r.err << "]";
    EXPECT_NE(r.err.find(expect), std::string::npos) << args << " -> " << r.err;
    EXPECT_FALSE(fs::exists(dir / "t.json")) << args;
  }
}

// DIR/train holds the camera photo and DIR/test the moon: the smallest tune split.
void one_photo_split(const fs::path& dir) {
  const fs::path photos = fs::path(KPERF_TEST_SOURCE_DIR) / "datasets" / "images";
  for (const char* sub : {"train", "test"}) fs::create_directories(dir / sub);
  fs::copy_file(photos / "camera.png", dir / "train" / "camera.png");
  fs::copy_file(photos / "moon.png", dir / "test" / "moon.png");
}

// The kernels index a grid with 32-bit int: every way a size reaches kperf refuses a grid of more
// than INT_MAX elements with one line, exit 2, before anything is allocated or written. (46340^2
// passing is Parsers.WorkGroupsSizesCounts's: a run at that size would allocate 8.6 GB.)
TEST(Cli, GridsBeyondA32BitIndexAreRefusedByEveryCommand) {
  TempDir dir;
  {
    // A header claiming 46341x46341 floats and no data.
    std::string npy("\x93NUMPY\x01\x00", 8);
    const std::string header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (46341, 46341), }\n";
    npy.push_back(static_cast<char>(header.size()));
    npy.push_back(0);
    fs::create_directories(dir / "huge");
    std::ofstream(dir / "huge/huge.npy", std::ios::binary) << npy << header << "1234";
  }
  for (const char* split : {"train", "test"}) {
    fs::create_directories(dir / split);
    write_npy((dir / split / (std::string(split) + ".npy")).string(), Grid(16, 16, 1.0f));
  }
  const std::string d = dir.path().string(), out = " --out " + d + "/r.json";
  const std::string tune = "tune --apps gaussian3 --budget 0.1 --train train --test test";
  const BadCase cases[] = {
      {"run --dry-run --size 46341", "invalid size '46341': 46341x46341 is 2147488281 elements"},
      {"run --size 65536x32768", "invalid size '65536x32768'"},
      {"run --size 512,32768x65536", "invalid size '32768x65536'"},
      {"run --input huge/huge.npy", "huge.npy: shape (46341, 46341): 46341x46341"},
      {"run --apps hotspot --temp huge/huge.npy --power huge/huge.npy", "huge.npy: shape"},
      {"check --apps gaussian3 --size 46341", "invalid size '46341'"},
      {"pipeline --pipeline blur-edges --size 46341", "invalid size '46341'"},
      {"tune --pipeline blur-edges --budget 0.1 --train train --test test --size 46341",
       "invalid size '46341'"},
  };
  auto refused = [&](const std::string& args, const std::string& expect) {
    const bool check = args.rfind("check", 0) == 0;  // kperf check writes no document
    const CliRun r = kperf_cli(args + (check ? "" : out), dir, "cd " + d + " &&");
    EXPECT_EQ(r.exit_code, 2) << args << " -> " << r.err;
    EXPECT_TRUE(one_line(r.err)) << args << " -> [" << r.err << "]";
    EXPECT_NE(r.err.find(expect), std::string::npos) << args << " -> " << r.err;
    EXPECT_NE(r.err.find("32-bit integers, so at most 2147483647"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json")) << args;
  };
  for (const auto& c : cases) refused(c.args, c.expect);
  refused(tune + " --size 46341", "invalid size '46341'");
  fs::copy_file(dir / "huge/huge.npy", dir / "train/huge.npy");
  refused(tune, "huge.npy: shape (46341, 46341)");
}

TEST(Cli, TuneWithNoConfigurationWithinTheBudgetSaysSoAndExitsZero) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  one_photo_split(dir.path());
  const std::string d = dir.path().string();
  // Even the accurate float kernel differs from the double reference by more than 1e-12.
  const CliRun r = kperf_cli(
      "tune --apps gaussian3 --budget 1e-12 --size 40 --train " + d + "/train --test " + d +
          "/test --wg 8x8 --schemes accurate,rows:2 --recon nn --perforate device --load local "
          "--output none --precision f32 --relax none --warmup 0 --reps 2 --quiet --out " +
          d + "/t.json",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no configuration is within the budget"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(read_file((dir / "t.json").string()));
  const auto& choice = doc["tune"]["gaussian3"]["choices"][0];
  EXPECT_TRUE(choice["chosen"].is_null());
  EXPECT_EQ(doc["tune"]["gaussian3"]["pruned"][0]["variant"], "rows:2/nn");
}

// --resume continues only a run measured under the same settings: another --warmup, --reps,
// --cl-options, --iterations, --cold, --transfers, --max-cv, --bilateral-sigmas or --metrics-on
// is refused with one line naming the fields, exit 2, the file untouched; more apps, schemes,
// axes values, shapes and inputs extend it.
TEST(Cli, ResumeRefusesOtherSettingsAndExtendsTheSameOnes) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const std::string out = (dir / "r.json").string();
  const std::string base =
      "run --wg 8x4 --size 40x24 --input synthetic:noise --quiet --out " + out + " ";
  ASSERT_EQ(kperf_cli(base + "--apps gaussian3 --schemes accurate,rows1 --warmup 0 --reps 2", dir)
                .exit_code,
            0);
  const std::string before = read_file(out);
  const auto first = nlohmann::json::parse(before);
  EXPECT_EQ(first["kind"], "run");
  EXPECT_EQ(first["context"]["fingerprint"]["options"]["reps"], 2);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--warmup 5 --reps 9", "options.warmup"},
      {"--warmup 5 --reps 9", "options.reps"},
      {"--warmup 0 --reps 9", "options.reps"},
      {"--warmup 0 --reps 2 --cl-options=-DKPERF_MATERIALIZE_ROWS=1", "options.cl_options"},
      {"--warmup 0 --reps 2 --cold", "options.cold"},
      {"--warmup 0 --reps 2 --iterations 7", "options.iterations"},
      {"--warmup 0 --reps 2 --metrics-on host", "options.metrics_on"},
      {"--warmup 0 --reps 2 --max-cv 0.5", "options.max_cv"},
      {"--warmup 0 --reps 2 --rounds 2", "options.rounds"},
  };
  for (const auto& [args, field] : refused) {
    const CliRun r =
        kperf_cli(base + "--apps gaussian3 --schemes accurate,rows1 --resume " + args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(one_line(r.err)) << args << " -> [" << r.err << "]";
    EXPECT_NE(r.err.find("measured under other settings"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(field), std::string::npos) << args << " -> " << r.err;
    EXPECT_EQ(read_file(out), before) << args;
  }
  // More apps and schemes under the same settings extend the file.
  const CliRun more = kperf_cli(
      base + "--apps gaussian3,median --schemes accurate,rows1,rows2 --warmup 0 --reps 2 --resume",
      dir);
  ASSERT_EQ(more.exit_code, 0) << more.err;
  const auto extended = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(extended["results"].size(), 6u);
  EXPECT_EQ(extended["context"]["fingerprint"], first["context"]["fingerprint"]);
  for (const auto& row : extended["results"]) EXPECT_EQ(row["samples_ns"].size(), 2u) << row["key"];
}

// --resume keeps documents what they are: a tune document given to kperf run, a run document
// given to kperf tune, or JSON that is not kperf's: one line, exit 2, the file untouched.
TEST(Cli, ResumeKeepsDocumentsTheirKind) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  one_photo_split(dir.path());
  const std::string d = dir.path().string();
  const std::string run_args =
      "run --apps gaussian3 --schemes accurate --wg 8x4 --size 40 "
      "--input synthetic:noise --warmup 0 --reps 1 --quiet --resume --out ";
  const std::string tune_args = "tune --apps gaussian3 --budget 0.5 --size 40 --train " + d +
                                "/train --test " + d +
                                "/test --wg 8x8 --schemes accurate "
                                "--load local --output none --precision f32 --relax none "
                                "--perforate device --warmup 0 --reps 1 --quiet --resume --out ";
  // A tune document (kind "tune") made by kperf tune, then given to kperf run.
  ASSERT_EQ(kperf_cli(tune_args + d + "/t.json", dir).exit_code, 0);
  const std::string tune_doc = read_file((dir / "t.json").string());
  CliRun r = kperf_cli(run_args + d + "/t.json", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("is a kperf tune document; kperf run --resume continues run documents"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file((dir / "t.json").string()), tune_doc);
  // A run document given to kperf tune.
  ASSERT_EQ(kperf_cli(run_args + d + "/r.json", dir).exit_code, 0);
  const std::string run_doc = read_file((dir / "r.json").string());
  r = kperf_cli(tune_args + d + "/r.json", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a kperf run document; kperf tune --resume continues tune documents"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file((dir / "r.json").string()), run_doc);
  // JSON that is not a kperf document, and a file that is not JSON.
  std::ofstream(dir / "other.json") << "{\"results\": 3}\n";
  std::ofstream(dir / "text.json") << "not json at all\n";
  for (const char* name : {"other.json", "text.json"})
    for (const std::string& args : {run_args, tune_args}) {
      const std::string path = (dir / name).string(), content = read_file(path);
      r = kperf_cli(args + path, dir);
      EXPECT_EQ(r.exit_code, 2) << name;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find("is not a kperf document"), std::string::npos) << r.err;
      EXPECT_EQ(read_file(path), content);
    }
}

// Failures that are not the device's: a --save-outputs write that fails and a configuration that
// runs out of host memory are rows with status host_error and a reason, and the sweep goes on; an
// error that ends the run (an input failing in the middle) keeps the rows measured before it
// (complete: false, the error in the context) and exits with one line. KPERF_FAULT injects them.
TEST(Cli, HostErrorsAreRowsAndAnEarlyEndKeepsTheRows) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string args =
      "run --apps gaussian3,median --schemes accurate,rows1 --wg 8x4 --size 40 "
      "--input synthetic:noise --input synthetic:smooth --warmup 0 --reps 1 "
      "--quiet --out ";
  fs::create_directories(dir / "saved");
  CliRun r =
      kperf_cli(args + d + "/save.json --save-outputs " + d + "/saved", dir, "KPERF_FAULT=save");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(read_file((dir / "save.json").string()));
  EXPECT_TRUE(doc["context"]["complete"].get<bool>());
  ASSERT_EQ(doc["results"].size(), 8u);
  for (const auto& row : doc["results"]) {
    EXPECT_EQ(row["status"], "host_error") << row["key"];
    EXPECT_NE(row["reason"].get<std::string>().find("--save-outputs:"), std::string::npos);
    EXPECT_TRUE(row.contains("time_ns")) << "the measurement stands";
  }

  r = kperf_cli(args + d + "/alloc.json", dir, "KPERF_FAULT=alloc:3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  doc = nlohmann::json::parse(read_file((dir / "alloc.json").string()));
  ASSERT_EQ(doc["results"].size(), 8u);
  int host_errors = 0;
  for (const auto& row : doc["results"])
    if (row["status"] == "host_error") {
      ++host_errors;
      EXPECT_EQ(row["reason"], "the host ran out of memory (std::bad_alloc)");
    } else {
      EXPECT_EQ(row["status"], "ok") << row["key"];
    }
  EXPECT_EQ(host_errors, 1);

  // The third workload (app x input) fails: the two before it are kept.
  r = kperf_cli(args + d + "/early.json.gz", dir, "KPERF_FAULT=workload:3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("injected fault"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 results kept in " + d + "/early.json.gz (complete: false)"),
            std::string::npos)
      << r.err;
  doc = nlohmann::json::parse(read_document((dir / "early.json.gz").string()));
  EXPECT_FALSE(doc["context"]["complete"].get<bool>());
  EXPECT_EQ(doc["context"]["error"]["kind"], "input");
  EXPECT_EQ(doc["results"].size(), 4u);
  // The kept rows resume like any others.
  r = kperf_cli(args + d + "/early.json.gz --resume", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  doc = nlohmann::json::parse(read_document((dir / "early.json.gz").string()));
  EXPECT_TRUE(doc["context"]["complete"].get<bool>());
  EXPECT_FALSE(doc["context"].contains("error"));
  EXPECT_EQ(doc["results"].size(), 8u);
}

// kperf tune keeps what its stages measured when an error ends it early, and --resume goes on.
TEST(Cli, TuneEndedEarlyKeepsItsRowsAndResumes) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const fs::path photos = fs::path(KPERF_TEST_SOURCE_DIR) / "datasets" / "images";
  for (const char* sub : {"train", "test"}) fs::create_directories(dir / sub);
  fs::copy_file(photos / "camera.png", dir / "train" / "camera.png");
  fs::copy_file(photos / "coins.png", dir / "train" / "coins.png");
  fs::copy_file(photos / "moon.png", dir / "test" / "moon.png");
  const std::string d = dir.path().string();
  const std::string args = "tune --apps gaussian3 --budget 0.05 --size 40 --train " + d +
                           "/train --test " + d +
                           "/test --wg 8x8 --schemes accurate,rows:2 "
                           "--recon nn --load local --output none --precision f32 --relax none "
                           "--perforate device --warmup 0 --reps 1 --quiet --out " +
                           d + "/t.json";
  CliRun r = kperf_cli(args, dir, "KPERF_FAULT=workload:3");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("rows kept in"), std::string::npos) << r.err;
  auto doc = nlohmann::json::parse(read_file((dir / "t.json").string()));
  EXPECT_EQ(doc["kind"], "tune");
  EXPECT_FALSE(doc["context"]["complete"].get<bool>());
  EXPECT_EQ(doc["context"]["error"]["kind"], "input");
  const std::size_t kept = doc["results"].size();
  EXPECT_GE(kept, 2u);
  r = kperf_cli(args + " --resume", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  doc = nlohmann::json::parse(read_file((dir / "t.json").string()));
  EXPECT_TRUE(doc["context"]["complete"].get<bool>());
  EXPECT_GT(doc["results"].size(), kept);
  EXPECT_FALSE(doc["tune"].is_null());
}

TEST(Cli, DevicesJsonHasTableOneFields) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const CliRun r = kperf_cli("devices --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_FALSE(doc.at("devices").empty());
  for (const char* k : {"name", "vendor", "driver_version", "opencl_c_version", "type",
                        "compute_units", "max_clock_mhz", "global_mem_size", "max_mem_alloc_size",
                        "local_mem_size", "local_mem_type", "unified_memory", "max_work_group_size",
                        "max_work_item_sizes", "profiling_timer_resolution_ns", "platform"})
    EXPECT_TRUE(doc["devices"][0].contains(k)) << k;
}

}  // namespace
}  // namespace kperf

namespace kperf {
namespace {

// --energy auto where the device has no counter (PoCL without readable RAPL; an explicit nvml on
// a device that is not NVIDIA's is refused up front): the run goes on, every row says energy
// null, and the context says why once.
TEST(Cli, EnergyAutoWithoutACounterRunsWithNullEnergy) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  const DeviceInfo& dev = test::test_env()->info();
  TempDir dir;
  if (dev.vendor.find("NVIDIA") == std::string::npos) {
    const CliRun r =
        kperf_cli("run --energy nvml --size 16 --out " + (dir / "n.json").string(), dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("--energy nvml: --energy nvml needs an NVIDIA device"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "n.json"));
  }
  const CliRun r = kperf_cli(
      "run --energy auto --apps gaussian3 --schemes accurate,rows:2 --wg 8x8 "
      "--size 32 --warmup 0 --reps 2 --quiet --out " +
          (dir / "a.json").string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(read_file((dir / "a.json").string()));
  const auto& energy = doc["context"]["energy"];
  if (!energy["source"].is_null()) GTEST_SKIP() << "this machine has a counter: " << energy;
  EXPECT_NE(energy["reason"].get<std::string>().find("--energy auto: "), std::string::npos);
  ASSERT_EQ(doc["results"].size(), 2u);
  for (const auto& row : doc["results"]) {
    ASSERT_TRUE(row.contains("energy")) << row["key"];
    EXPECT_TRUE(row["energy"].is_null());
  }
  EXPECT_EQ(doc["context"]["fingerprint"]["options"]["energy"]["source"], "none");
}

// The summary's first line names the grid and why; the input column holds whole names. On a CPU
// device the default is the photo's own size, the cache unprobed; on a GPU, the probed choice.
TEST(Cli, SummaryNamesTheSizeAndWholeInputNames) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const std::string common =
      " --apps inversion --schemes accurate,rows:2 --wg 8x8 --warmup 0 "
      "--reps 2 --quiet --out " +
      (dir / "s.json").string();
  const CliRun first = kperf_cli("run" + common, dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string line = first.out.substr(0, first.out.find('\n'));
  const auto doc = nlohmann::json::parse(read_file((dir / "s.json").string()));
  if (test::test_env()->info().is_gpu()) {
    ASSERT_TRUE(doc["context"].contains("default_size")) << doc["context"].dump();
    EXPECT_EQ(line, doc["context"]["default_size"]["reason"].get<std::string>());
  } else {
    EXPECT_EQ(line.rfind("size: ", 0), 0u) << line;
    EXPECT_NE(line.find("the default photo's own"), std::string::npos) << line;
    EXPECT_FALSE(doc["context"].contains("default_size"));
  }
  const std::string name = "an-input-whose-name-is-longer-than-the-old-column";
  const CliRun named = kperf_cli("run --input synthetic:noise --size 24x20" + common, dir);
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out.rfind("size: 24x20 (--size)\n", 0), 0u) << named.out;
  EXPECT_NE(named.out.find("synthetic-noise@24x20"), std::string::npos) << named.out;
  TempDir inputs;
  Grid grid(21, 19);
  for (std::size_t i = 0; i < grid.data.size(); ++i) grid.data[i] = static_cast<float>(i % 97);
  write_npy((inputs / (name + ".npy")).string(), grid);
  const CliRun own = kperf_cli("run --input " + (inputs / (name + ".npy")).string() + common, dir);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out.rfind("size: each input's own", 0), 0u) << own.out;
  EXPECT_NE(own.out.find(name + "@21x19"), std::string::npos) << own.out;
}

}  // namespace
}  // namespace kperf
