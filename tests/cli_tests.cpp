// Command-line tests of the built binary: bad input gets one line on stderr, a non-zero exit
// and no output file; a good run writes a complete, versioned JSON document; interruption and
// resume, sizes, cold timing, --max-cv and rounds (caches, tune and resume rules:
// cli_more_tests.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
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

// Every bad input of `kperf run` and `kperf tune` that gets one line, a non-zero exit and no file.
const BadCase kBadInputCases[] = {
    {"run --bogus-flag", "bogus"},
    {"run --wg 16y8", "invalid work-group size '16y8'"},
    {"run --apps bilateral --bilateral-sigmas 0,2", "sigma_color must be a positive number"},
    {"run --apps bilateral --bilateral-sigmas 25,-1", "sigma_space must be a positive number"},
    {"run --apps bilateral --bilateral-sigmas abc,2", "sigma_color must be a positive number"},
    {"run --apps bilateral --bilateral-sigmas 25", "expected two numbers C,S"},
    {"run --loop-skip 3", "unknown --loop-skip '3' (valid: 1, 2)"},
    {"run --metrics-on gpu", "unknown --metrics-on 'gpu'"},
    {"run --max-cv 1.5", "invalid --max-cv '1.5' (expected a fraction in (0, 1)"},
    {"run --max-reps 100", "--max-reps needs --max-cv"},
    {"run --max-cv 0.01 --reps 20 --max-reps 10", "--max-reps 10 is below --reps 20"},
    {"run --rounds 0", "--rounds"},
    {"run --rounds 11 --reps 10", "--rounds 11 is above --reps 10"},
    {"run --rounds 2 --max-cv 0.1", "--rounds and --max-cv cannot be combined"},
    {"run --weights lut", "unknown --weights 'lut' (valid: table, computed)"},
    {"run --preset sagiv", "unknown --preset 'sagiv'"},
    {"run --wg 0x8", "invalid work-group size '0x8'"},
    {"run --input /no/such/file.png", "/no/such/file.png: no such file"},
    {"run --input junk.png", "junk.png: not a readable image"},
    {"run --input empty.png", "empty.png: empty file"},
    {"run --input f64.npy", "dtype '<f8'"},
    {"run --apps hotspot --temp t3 --power p3", "power grid is 3x3 but temperature grid"},
    {"run --apps hotspot --temp word --power word", "word:2: not a number"},
    {"run --device no-such-device-name", "no device name contains 'no-such-device-name'; devices:"},
    {"run --device 7:7", "no device 7:7"},
    {"run --schemes rows:0", "rows:K"},
    {"run --schemes rows:-2", "rows:K"},
    {"run --schemes cols:x", "rows:K"},
    {"run --recon cubic", "valid: nn, li"},
    {"run --apps blur", "unknown app 'blur'"},
    {"run --reps -3", "--reps"},
    {"run --warmup x", "--warmup"},
    {"run --size 0", "invalid size '0'"},
    {"run --input synthetic:plasma", "unknown synthetic input"},
    {"run --kernel-dir /nonexistent", "has no kernels/ folder"},
    {"frobnicate", "unknown command"},
    {"run --load texture", "unknown load path 'texture' (valid: local, global, image)"},
    {"run --load local,", "unknown load path ''"},
    {"run --output diag:2", "unknown output scheme 'diag:2' (valid: none, rows:K"},
    {"run --output rows:1", "invalid factor K in 'rows:1'"},
    {"run --output center", "needs a factor K"},
    {"run --output-recon cubic", "unknown reconstruction 'cubic' (valid: nn, li"},
    {"run --output rows:2 --output-fill twice",
     "unknown --output-fill 'twice' (valid: fused, shared, separate)"},
    {"run --output-fill separate",
     "--output-fill separate needs an output scheme (--output rows:K, cols:K or center:K)"},
    {"run --vec 3", "invalid --vec '3' (valid: 1, 2, 4, 8)"},
    {"run --relax sometimes", "unknown --relax 'sometimes' (valid: none, skip)"},
    {"run --binary-cache /proc/kperf-cache",
     "--binary-cache /proc/kperf-cache: cannot create or write directory"},
    {"run --precision f64", "unknown --precision 'f64' (valid: f32, f16in, f16, bf16)"},
    {"run --perforate cloud", "unknown --perforate 'cloud' (valid: device, host)"},
    {"run --iterations-skip 1",
     "invalid --iterations-skip '1' (expected fractions R with 0 <= R < 1"},
    {"run --iterations-skip -0.5", "invalid --iterations-skip '-0.5'"},
    {"run --output rows:9 --size 8 --input synthetic:smooth",
     "--output rows:9 is larger than the 8x8 grid"},
    {"run --output cols:40 --size 32x64 --input synthetic:smooth",
     "--output cols:40 is larger than the 32x64 grid"},
    {"run --energy rapl",
     "unknown --energy 'rapl' (valid: none, auto, nvml, powercap, hwmon:PATH)"},
    {"run --energy hwmon:/nonexistent/power1_input --size 16",
     "--energy hwmon:/nonexistent/power1_input: the sensor cannot be read"},
    {"run --energy hwmon:/proc/version --size 16", "not an energyN_input or powerN_input sensor"},
    {"run --energy-window 0", "invalid --energy-window '0'"},
    {"run --energy-reps 0", "--energy-reps"},
    {"tune --budget 0.1 --train /nonexistent --test /nonexistent --objective energy",
     "--objective energy needs --energy (auto, nvml, powercap or hwmon:PATH)"},
    {"tune --budget 0.1 --train /nonexistent --test /nonexistent --objective joules",
     "--objective joules: expected kernel, end-to-end or energy"},
};

TEST(Cli, BadInputGetsOneLineAndNoOutput) {
  TempDir dir;
  std::ofstream(dir / "junk.png") << "not a png";
  std::ofstream(dir / "empty.png") << "";
  {
    std::string npy("\x93NUMPY\x01\x00", 8);
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n";
    npy.push_back(static_cast<char>(header.size()));
    npy.push_back(0);
    std::ofstream(dir / "f64.npy", std::ios::binary) << npy << header << std::string(32, '\0');
  }
  std::ofstream(dir / "t3") << "1\n2\n3\n4\n";
  std::ofstream(dir / "p3") << "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::ofstream(dir / "word") << "1\nx\n3\n4\n";
  const std::string d = dir.path().string();
  const std::string out = " --out " + d + "/r.json";
  for (const auto& c : kBadInputCases) {
    const CliRun r = kperf_cli(std::string(c.args) + out, dir, "cd " + d + " &&");
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_TRUE(one_line(r.err)) << c.args << " -> [" << r.err << "]";
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << " -> " << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json")) << c.args;
  }
  // A size beyond the device's largest allocation is refused before anything is allocated. The
  // largest grid --size takes (46340^2 floats, 8.6 GB: io.hpp's kMaxGridElements) fits one
  // allocation on a big GPU (an H200 allows 35 GB), where this check cannot be provoked.
  const std::uint64_t largest_grid = std::uint64_t{46340} * 46340 * sizeof(float);
  if (test::test_env() && test::test_env()->info().max_mem_alloc_size < largest_grid) {
    const CliRun huge =
        kperf_cli("run --apps gaussian3 --size 46340 --input synthetic:noise" + out, dir);
    EXPECT_EQ(huge.exit_code, 2);
    EXPECT_TRUE(one_line(huge.err)) << huge.err;
    EXPECT_NE(huge.err.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << huge.err;
    EXPECT_FALSE(fs::exists(dir / "r.json"));
  }
  const CliRun resume = kperf_cli("run --resume", dir);
  EXPECT_EQ(resume.exit_code, 2);
  EXPECT_NE(resume.err.find("--resume needs --out"), std::string::npos) << resume.err;
  // An output path that cannot be written is refused before any work.
  const CliRun unwritable = kperf_cli("run --apps inversion --out /nonexistent-dir/r.json", dir);
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_TRUE(one_line(unwritable.err)) << unwritable.err;
  EXPECT_NE(unwritable.err.find("does not exist"), std::string::npos) << unwritable.err;
}

TEST(Cli, NoOpenClPlatformIsOneLine) {
  TempDir dir;
  // An empty vendor directory: the ICD loader finds no platform.
  fs::create_directories(dir / "vendors");
  const CliRun r = kperf_cli(
      "devices", dir, "OCL_ICD_VENDORS=" + (dir / "vendors").string() + " OCL_ICD_FILENAMES=");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("no OpenCL platform"), std::string::npos) << r.err;
}

TEST(Cli, RunWritesVersionedJsonAndOutputs) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const std::string d = dir.path().string();
  const CliRun r = kperf_cli(
      "run --apps gaussian3,inversion --schemes accurate,stencil,rows1 --wg 16x8,8x4 "
      "--input synthetic:noise --size 40x24 --warmup 2 --reps 3 --quiet --out " +
          d + "/r.json --save-outputs " + d + "/outs",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(read_file((dir / "r.json").string()));
  EXPECT_EQ(doc.at("schema_version"), 2);
  for (const char* k : {"date", "host", "kperf_version", "git_sha", "build_type", "command_line",
                        "device", "warmup", "reps", "copy_gbps", "sources", "sources_sha256"})
    EXPECT_TRUE(doc.at("context").contains(k)) << k;
  EXPECT_EQ(doc["context"]["reps"], 3);
  EXPECT_TRUE(doc["context"]["device"].contains("local_mem_type"));
  // The copy yardsticks of the input's size: the float copy and the three copies of halves at
  // the half precisions' stored sizes, each measured (a positive bandwidth).
  ASSERT_EQ(doc["context"]["copy"].size(), 1u);
  const auto& copy = doc["context"]["copy"][0];
  EXPECT_EQ(copy["status"], "ok");
  for (const char* k : {"float4_gbps", "half_gbps", "half_convert_gbps", "half_to_float_gbps"})
    EXPECT_GT(copy.at(k).get<double>(), 0.0) << k;
  // The harness's wall time broken down by phase: every phase present, none negative, and
  // together no more than the wall time; this run saved outputs, so that phase took time.
  const auto& harness = doc["context"]["harness"];
  double phases_total = 0;
  for (const char* phase :
       {"compile", "reference", "upload", "timed_launches", "transfers", "download", "metrics",
        "verify", "save_outputs", "copy_bandwidth", "write"}) {
    ASSERT_TRUE(harness["phases_s"].contains(phase)) << phase;
    const double t = harness["phases_s"][phase].get<double>();
    EXPECT_GE(t, 0.0) << phase;
    phases_total += t;
  }
  EXPECT_GT(harness["phases_s"]["save_outputs"].get<double>(), 0.0);
  EXPECT_GT(harness["phases_s"]["timed_launches"].get<double>(), 0.0);
  EXPECT_LE(phases_total, harness["wall_s"].get<double>());
  const auto& results = doc.at("results");
  ASSERT_EQ(results.size(), 2u * 3u * 2u);
  std::map<std::string, int> best_per_group;
  for (const auto& row : results) {
    const std::string status = row.at("status");
    if (row["app"] == "inversion" && row["scheme"] == "stencil") {
      EXPECT_EQ(status, "not_applicable");
      continue;
    }
    ASSERT_EQ(status, "ok") << row.dump();
    EXPECT_EQ(row.at("samples_ns").size(), 3u);
    EXPECT_TRUE(fs::exists(row.at("output_file").get<std::string>()));
    EXPECT_EQ(read_npy(row.at("output_file")).width, 40);
    best_per_group[row["app"].get<std::string>() + row["scheme"].get<std::string>()] +=
        row["best_wg"].get<bool>();
  }
  for (const auto& [group, count] : best_per_group) EXPECT_EQ(count, 1) << group;
  EXPECT_NE(r.out.find("gaussian3"), std::string::npos);  // the summary table
}

// A run stopped after N finished rows (KPERF_FAULT=interrupt-after:N, term-after:N: the signal
// through the supervisor, as Ctrl-C; kill-after:N: SIGKILL of supervisor and child) keeps exactly
// those N rows (SIGKILL: the last checkpoint, after every row under KPERF_CHECKPOINT_S=0; none
// before the first), and --resume measures the rest alone: its rows equal an uninterrupted run's
// in keys, statuses and errors. Plain and compressed (--out *.json.gz) alike.
TEST(Cli, InterruptAndResumeGiveTheUninterruptedRows) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const std::string args =
      "run --apps gaussian3,sobel5,median,hotspot --schemes accurate,rows1,cols:2 "
      "--wg 16x8,8x4 --size 96x80 --iterations 4 --warmup 2 --reps 3 --quiet --out ";
  ASSERT_EQ(kperf_cli(args + (dir / "full.json").string(), dir).exit_code, 0);
  const auto rows_of = [](const fs::path& file) {
    std::map<std::string, nlohmann::json> rows;
    const auto doc = nlohmann::json::parse(read_document(file.string()));
    for (const auto& row : doc.at("results")) rows[row.at("key").get<std::string>()] = row;
    return std::make_pair(doc, rows);
  };
  const auto [full_doc, full] = rows_of(dir / "full.json");
  const std::size_t total = 4 * 3 * 2;
  ASSERT_EQ(full.size(), total);

  struct Cut {
    const char* fault;
    int rows;  // finished rows before the signal
    int kept;  // rows the cut file holds (-1: no file)
    const char* env;
  };
  const Cut cuts[] = {{"interrupt-after", 5, 5, ""},
                      {"term-after", 9, 9, ""},
                      {"kill-after", 7, 7, "KPERF_CHECKPOINT_S=0"},
                      {"kill-after", 3, -1, "KPERF_CHECKPOINT_S=100000"}};
  for (std::size_t attempt = 0; attempt < std::size(cuts); ++attempt) {
    const Cut& c = cuts[attempt];
    const std::string what = std::string(c.fault) + ":" + std::to_string(c.rows);
    const fs::path out =
        dir / ("part" + std::to_string(attempt) + (attempt % 2 ? ".json.gz" : ".json"));
    const CliRun cut =
        kperf_cli(args + out.string(), dir, std::string(c.env) + " KPERF_FAULT=" + what);
    const bool killed = std::string(c.fault) == "kill-after";
    if (killed)
      EXPECT_TRUE(cut.exit_code == 137 || cut.exit_code == -1) << what << ": " << cut.exit_code;
    else
      EXPECT_EQ(cut.exit_code, 130) << what << ": " << cut.err;
    if (c.kept < 0) {
      EXPECT_FALSE(fs::exists(out)) << what << ": killed before the first checkpoint";
    } else {
      ASSERT_TRUE(fs::exists(out)) << what;
      bool complete = true;
      const auto partial = result_keys(out, &complete);
      EXPECT_FALSE(complete) << what;
      EXPECT_EQ(partial.size(), static_cast<std::size_t>(c.kept)) << what;
      for (const auto& k : partial) EXPECT_TRUE(full.count(k)) << k;
    }
    // Only SIGKILL may cut a write short and leave this attempt's temporary file behind.
    if (!killed)
      for (const auto& leftover : fs::directory_iterator(dir.path()))
        EXPECT_NE(leftover.path().filename().string().rfind(out.filename().string() + ".tmp.", 0),
                  0u)
            << leftover.path();

    const CliRun resumed = kperf_cli(args + out.string() + " --resume", dir);
    ASSERT_EQ(resumed.exit_code, 0) << what << ": " << resumed.err;
    const auto [doc, rows] = rows_of(out);
    EXPECT_TRUE(doc.at("context").at("complete").get<bool>()) << what;
    EXPECT_EQ(doc.at("results").size(), total) << what << ": a row twice";
    // The resumed session measured only what the cut file lacked.
    EXPECT_EQ(doc.at("context").at("harness").at("configurations").get<std::size_t>(),
              total - static_cast<std::size_t>(std::max(c.kept, 0)))
        << what;
    for (const auto& [key, want] : full) {
      ASSERT_TRUE(rows.count(key)) << what << ": " << key;
      const nlohmann::json& got = rows.at(key);
      EXPECT_EQ(got.at("status"), want.at("status")) << what << ": " << key;
      EXPECT_EQ(got.value("error", nlohmann::json()), want.value("error", nlohmann::json()))
          << what << ": " << key;
    }
  }
}

TEST(Cli, NonFiniteInputWarnsAndIsCounted) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  Grid g = test::random_grid(16, 12, 3);
  g.at(5, 5) = std::numeric_limits<float>::quiet_NaN();
  g.at(7, 2) = std::numeric_limits<float>::infinity();
  write_npy((dir / "nan.npy").string(), g);
  const CliRun r = kperf_cli(
      "run --apps inversion --schemes accurate --wg 8x4 --warmup 0 --reps 1 --quiet --input " +
          (dir / "nan.npy").string() + " --out " + (dir / "r.json").string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: input nan has 2 non-finite values"), std::string::npos) << r.err;
  const auto doc = nlohmann::json::parse(read_file((dir / "r.json").string()));
  EXPECT_EQ(doc["results"][0]["error"]["nonfinite"], 2);
  EXPECT_EQ(doc["results"][0]["status"], "ok");
}

TEST(Cli, SizeListRunsEverySize) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  const CliRun r = kperf_cli(
      "run --apps inversion,hotspot --schemes accurate --wg 8x8 --size 24x16,40 "
      "--input synthetic:noise --iterations 2 --warmup 0 --reps 1 --quiet --out " +
          (dir / "r.json").string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(result_keys(dir / "r.json"),
            (std::set<std::string>{"inversion/accurate/none/wg:8x8/synthetic-noise/24x16",
                                   "inversion/accurate/none/wg:8x8/synthetic-noise/40x40",
                                   "hotspot/accurate/none/wg:8x8/synthetic-chip/24x16",
                                   "hotspot/accurate/none/wg:8x8/synthetic-chip/40x40"}));
}

// --cold: the context says how many bytes flush the cache before each sample (at least 256 MiB
// or half the largest allocation); every row is still measured. The copy kernels, the rooflines'
// reference, are timed alike: a flush before each of their timed launches (five copies, three
// reps). Without it, "cold" is false and the copies are timed warm.
TEST(Cli, ColdFlushesBeforeEverySampleAndSaysSo) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  for (const std::string flag : {"--cold", ""}) {
    const CliRun r = kperf_cli(
        "run --apps gaussian3,hotspot --schemes accurate,rows1 --wg 8x8 --size 32 "
        "--iterations 2 --warmup 1 --reps 3 --quiet " +
            flag + " --out " + (dir / "r.json").string(),
        dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(read_file((dir / "r.json").string()));
    const auto& cold = doc["context"]["cold"];
    ASSERT_EQ(doc["context"]["copy"].size(), 1u);
    for (const auto& copy : doc["context"]["copy"]) {
      EXPECT_EQ(copy.at("status"), "ok");
      EXPECT_EQ(copy.at("cold"), !flag.empty());
      EXPECT_EQ(copy.at("flushes"), flag.empty() ? 0 : 5 * 3);
    }
    if (flag.empty()) {
      EXPECT_EQ(cold, false);
      continue;
    }
    const std::uint64_t max_alloc =
        doc["context"]["device"]["max_mem_alloc_size"].get<std::uint64_t>();
    const std::uint64_t flush = cold.at("flush_bytes").get<std::uint64_t>();
    EXPECT_TRUE(flush >= (std::uint64_t{256} << 20) || flush >= max_alloc / 2 - 4) << flush;
    EXPECT_LE(flush, max_alloc);
    ASSERT_EQ(doc["results"].size(), 4u);
    for (const auto& row : doc["results"]) {
      EXPECT_EQ(row.at("status"), "ok") << row.at("key");
      EXPECT_EQ(row.at("samples_ns").size(), 3u);
    }
  }
}

// --max-cv: batches of --reps samples until the cv is within the limit or --max-reps is reached;
// every row says which, and its samples are all kept. A limit no timing meets runs to the cap.
TEST(Cli, MaxCvStopsOnQuietSamplesOrTheCap) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  for (const std::string limit : {"0.5", "0.000000001"}) {
    const CliRun r = kperf_cli(
        "run --apps gaussian3,hotspot --schemes accurate,rows1 --wg 8x8 "
        "--size 32 --iterations 2 --warmup 1 --reps 3 --max-reps 7 "
        "--quiet --max-cv " +
            limit + " --out " + (dir / "r.json").string(),
        dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(read_file((dir / "r.json").string()));
    EXPECT_EQ(doc["context"]["max_cv"]["max_reps"], 7);
    ASSERT_EQ(doc["results"].size(), 4u);
    const double max_cv = std::stod(limit);
    for (const auto& row : doc["results"]) {
      ASSERT_EQ(row.at("status"), "ok") << row.at("key");
      const auto samples = row.at("samples_ns").get<std::vector<std::uint64_t>>();
      // Sampling stops at the first batch end (3, 6, then the cap 7) whose samples so far have
      // a cv within the limit.
      std::size_t expected = 7;
      for (std::size_t end : {3u, 6u, 7u})
        if (end <= samples.size() &&
            summarize({samples.begin(), samples.begin() + end}).cv <= max_cv) {
          expected = end;
          break;
        }
      EXPECT_EQ(samples.size(), expected) << row.at("key");
      const bool quiet = summarize(samples).cv <= max_cv;
      EXPECT_EQ(row.at("stop_reason"), quiet ? "cv" : "max_reps") << row.at("key");
      EXPECT_DOUBLE_EQ(row.at("time_ns").at("cv").get<double>(), summarize(samples).cv);
    }
    if (limit == "0.000000001")  // no timing is that steady: every row ran to the cap
      for (const auto& row : doc["results"]) EXPECT_EQ(row.at("samples_ns").size(), 7u);
  }
}

// --rounds: every configuration gets its --reps samples, split over the rounds, and the rounds
// interleave the configurations (each round's start dated on the device's clock: round r of
// every configuration lies between rounds r-1 and r+1 of every other, in the sweep's order,
// reversed in odd rounds). The errors are each configuration's own, as without rounds, although
// other configurations wrote the output buffer after its samples; hotspot's ping-pong too.
TEST(Cli, RoundsInterleaveTheConfigurationsAndKeepTheirErrors) {
  if (!test::test_env()) GTEST_SKIP() << "no OpenCL device";
  TempDir dir;
  auto run = [&](const std::string& extra) {
    const std::string out = (dir / "r.json").string();
    const CliRun r = kperf_cli(
        "run --apps gaussian3,hotspot --schemes accurate,rows:2 --recon nn,li --wg 8x8,16x4 "
        "--size 48x40 --iterations 3 --warmup 1 --reps 7 --quiet --out " +
            out + " " + extra,
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(read_file(out));
  };
  const auto plain = run(""), rounds = run("--rounds 3");
  EXPECT_FALSE(plain["context"].contains("rounds"));
  EXPECT_EQ(rounds["context"]["rounds"]["rounds"], 3);
  EXPECT_EQ(rounds["context"]["fingerprint"]["options"]["rounds"], 3);
  std::map<std::string, nlohmann::json> errors;
  for (const auto& row : plain["results"]) {
    ASSERT_EQ(row["status"], "ok") << row["key"];
    EXPECT_FALSE(row.contains("round_start_ns"));
    errors[row["key"]] = row["error"];
  }
  // Rows in the sweep's order, per app (a workload).
  std::map<std::string, std::vector<std::vector<std::uint64_t>>> starts;
  for (const auto& row : rounds["results"]) {
    ASSERT_EQ(row["status"], "ok") << row["key"];
    EXPECT_EQ(row["samples_ns"].size(), 7u) << row["key"];
    EXPECT_EQ(row["error"], errors.at(row["key"])) << row["key"];
    starts[row["app"]].push_back(row.at("round_start_ns").get<std::vector<std::uint64_t>>());
  }
  EXPECT_EQ(errors.size(), rounds["results"].size());
  for (const auto& [app, rows] : starts) {
    ASSERT_GE(rows.size(), 4u) << app;
    std::vector<std::uint64_t> timeline;  // every round of every row, in the expected order
    for (int round = 0; round < 3; ++round)
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[round % 2 == 0 ? i : rows.size() - 1 - i];
        ASSERT_EQ(r.size(), 3u) << app;
        timeline.push_back(r[static_cast<std::size_t>(round)]);
      }
    EXPECT_TRUE(std::is_sorted(timeline.begin(), timeline.end())) << app;
  }
}

// --binary-cache: the first run stores a binary per program, the second loads every one of them
// and measures the same errors; an edited scheme file changes every key, so it compiles afresh.
}  // namespace
}  // namespace kperf
