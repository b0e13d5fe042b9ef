// Host unit tests of app manifests, energy windows and shards. No OpenCL device needed.
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

}  // namespace
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
