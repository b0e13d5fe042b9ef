// `kperf tune`: reads and checks the options, runs the Tuner and writes one
// JSON document (rows of every stage, per-app fronts, choices and test
// verdicts), atomically and resumably.
#include "tune_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <set>

#include "axis_options.hpp"
#include "cache_probe.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "fault_journal.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "option_groups.hpp"
#include "runner.hpp"
#include "select_options.hpp"
#include "strings.hpp"
#include "supervisor.hpp"
#include "tune.hpp"
#include "tune_device_list.hpp"
#include "tune_session.hpp"

namespace kperf {

namespace fs = std::filesystem;

std::vector<double> parse_budgets(const std::string &text) {
  std::vector<double> out;
  for (const auto &item : split_list(text)) {
    char *end = nullptr;
    const double b = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(b) || b <= 0 || b > 1)
      throw UsageError("invalid --budget '" + item +
                       "' (expected a fraction in (0, 1], e.g. 0.02 for 2 %; a "
                       "list is allowed)");
    out.push_back(b);
  }
  if (out.empty()) throw UsageError("--budget needs at least one value");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<ImageSource> read_input_dir(const std::string &option, const std::string &dir,
                                        std::vector<std::pair<int, int>> &sizes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + " " + dir + ": not a directory (give a directory of images)");
  std::vector<ImageSource> sources;
  try {
    sources = expand_inputs({dir});
  } catch (const InputError &e) {
    throw UsageError(option + " " + e.what());
  }
  std::set<std::string> names;
  for (const auto &src : sources) {
    if (!names.insert(src.name).second)
      throw UsageError(option + " " + dir + ": two files are named " + src.name +
                       " (inputs are told apart by file stem)");
    const Grid g = load_image_source(src, std::nullopt);
    sizes.emplace_back(g.width, g.height);
  }
  return sources;
}

namespace {

// 2: test errors at --percentile are "percentile_error" (1: "p95" at any); readers take both.
// 3: --select canary's margins calibrated (canary.calibration; raw_margin beside margin).
constexpr int kTuneSchemaVersion = 3;

// kperf tune's options (the axes' and the common ones added too).
cxxopts::Options tune_options() {
  cxxopts::Options options("kperf tune",
                           "Find the fastest configuration whose training "
                           "error stays within a budget, and check it "
                           "on held-out test inputs (SPEC 12)");
  // clang-format off
  options.add_options()
    ("apps", "image apps: gaussian3,gaussian5,sobel3,sobel5,median,inversion,bilateral or all", cxxopts::value<std::string>()->default_value("all"))
    ("size", "resize every train and test image to N or WxH", cxxopts::value<std::string>())
    ("max-combinations", "combinations of the axis fronts tried per app, fastest predicted first", cxxopts::value<std::string>()->default_value("32"))
    ("screen-combinations", "auto (3 x --max-combinations), 0 (no screen) or more than --max-combinations: time this many of the fastest predicted combinations at their probe shape on the first training input and try the --max-combinations fastest measured", cxxopts::value<std::string>()->default_value("auto"))
    ("sweep", "climb (time each survivor at its starting shapes, then at the neighbours of its fastest until none is faster) or every (every launch shape)", cxxopts::value<std::string>()->default_value("climb"))
    ("climb-band", "the climb goes on for a survivor only while its fastest time so far lies within this fraction of the fastest of a budget it meets (0.25), or all: every survivor climbs", cxxopts::value<std::string>()->default_value("0.25"))
    ("objective", "what is ranked: kernel (the launches' time), end-to-end (host packing or conversion, upload, launches, download) or energy (joules per launch; needs --energy)", cxxopts::value<std::string>()->default_value("kernel"))
    ("save-outputs", "directory for the test outputs of the choices and the accurate kernel (default: beside --out)", cxxopts::value<std::string>())
    ("devices", "spread each stage over these devices of one model, one process each: a list of --device values (1:0,1:1) or all (every device of --device's platform and model)", cxxopts::value<std::string>())
    ("resume", "continue an interrupted tune from --out")
    ("pipeline", "tune a chain of apps under one end-to-end budget instead (kperf tune --pipeline NAME --help; docs/pipelines.md)", cxxopts::value<std::string>());
  // clang-format on
  add_search_options(options, "the primary metric");
  add_shape_options(
      options, "work-groups WXxWY,... (default: 16x8,32x4,32x8,64x4 on GPUs, a short list on CPUs)",
      nullptr, " (default: 1,4 on GPUs, 1 on CPUs)", " (default: 1,4,6 on GPUs, 1 on CPUs)");
  add_timing_options(options, "launches per timed configuration", "10", "30");
  add_energy_options(options, " in the timed stages");
  add_out_option(options, "kperf-tune");
  add_select_options(options, "configuration");
  add_axis_options(options, true);
  add_common_options(options);
  return options;
}

// The search the command line asks for, before the device is known (shapes come later).
TuneConfig tune_config(const cxxopts::ParseResult &args) {
  auto given = [&](const char *name) { return args.count(name) > 0; };
  auto text = [&](const char *name) { return args[name].as<std::string>(); };
  for (const char *required : {"budget", "train", "test"})
    if (!given(required)) throw UsageError(std::string("kperf tune needs --") + required);

  TuneConfig cfg;
  cfg.budgets = parse_budgets(text("budget"));
  cfg.kernel_root = kernel_root_option(args);
  const std::vector<const AppDescriptor *> user_apps = load_apps(args, cfg.kernel_root);
  if (!user_apps.empty() && !given("apps")) {
    cfg.apps = user_apps;
  } else if (text("apps") == "all") {
    for (const auto &a : app_registry())
      if (a.takes_images()) cfg.apps.push_back(&a);
  } else {
    cfg.apps = parse_apps(text("apps"));
    for (auto *a : cfg.apps)
      if (!a->takes_images())
        throw UsageError(std::string("kperf tune takes image apps; ") + a->name +
                         " has no photo inputs (use kperf run)");
  }
  cfg.axes = axes_from(args, true);
  make_space(cfg.axes);  // a bad value fails here, before any work
  cfg.max_combinations = static_cast<std::size_t>(
      parse_count("max-combinations", text("max-combinations"), 0, 100000));
  // A screen of 3x as many as are tried chose faster than predictions (results/HISTORY.md).
  constexpr std::size_t kScreenFactor = 3;
  cfg.screen_combinations =
      text("screen-combinations") == "auto"
          ? kScreenFactor * cfg.max_combinations
          : static_cast<std::size_t>(
                parse_count("screen-combinations", text("screen-combinations"), 0, 100000));
  if (cfg.screen_combinations && cfg.screen_combinations <= cfg.max_combinations)
    throw UsageError("--screen-combinations " + std::to_string(cfg.screen_combinations) +
                     ": must exceed --max-combinations (" + std::to_string(cfg.max_combinations) +
                     "), or be 0 (no screen) or auto");
  const std::string sweep = text("sweep");
  if (sweep != "climb" && sweep != "every")
    throw UsageError("--sweep " + sweep + ": expected climb or every");
  cfg.sweep_every_shape = sweep == "every";
  cfg.climb_band = climb_band_from_text(text("climb-band"));
  cfg.tie_tolerance = parse_fraction("tie-tolerance", text("tie-tolerance"));
  cfg.percentile = parse_count("percentile", text("percentile"), 0, 100);
  const std::string objective = text("objective");
  if (objective != "kernel" && objective != "end-to-end" && objective != "energy")
    throw UsageError("--objective " + objective + ": expected kernel, end-to-end or energy");
  cfg.end_to_end = objective == "end-to-end";
  cfg.energy_objective = objective == "energy";
  check_energy_spec(text("energy"));
  cfg.energy_spec = text("energy");
  if (cfg.energy_objective && cfg.energy_spec == "none")
    throw UsageError("--objective energy needs --energy (auto, nvml, powercap or hwmon:PATH)");
  cfg.energy_options.window_s = parse_seconds("energy-window", text("energy-window"));
  cfg.energy_options.reps = parse_count("energy-reps", text("energy-reps"), 1, 1000);
  cfg.warmup = parse_count("warmup", text("warmup"), 0, 1000000);
  cfg.reps = parse_count("reps", text("reps"), 1, 1000000);
  cfg.cache = text("cache");
  if (cfg.cache != "auto" && cfg.cache != "cold" && cfg.cache != "warm")
    throw UsageError("--cache " + cfg.cache + ": expected auto, cold or warm");
  if (given("size")) cfg.size = parse_size(text("size"));
  const SelectOptions select = read_select_options(args);
  cfg.select_canary = select.canary;
  cfg.ladder = select.ladder;
  cfg.canary = select.settings;
  cfg.canary_on = select.canary_on;
  cfg.canary_calibrate = select.calibrate;
  if (cfg.select_canary && cfg.energy_objective)
    throw UsageError(
        "--select canary ranks time: a canary's cost is not in joules "
        "(--objective kernel or end-to-end)");
  if (given("cl-options")) cfg.extra_build_options = text("cl-options");
  cfg.compile_worker_exe = executable_path().string();

  std::vector<std::pair<int, int>> train_sizes, test_sizes;
  cfg.train = read_input_dir("--train", text("train"), train_sizes);
  cfg.test = read_input_dir("--test", text("test"), test_sizes);
  for (const auto &a : cfg.train)
    for (const auto &b : cfg.test) {
      std::error_code ec;
      if (fs::equivalent(a.path, b.path, ec))
        throw UsageError(a.path +
                         " is in both --train and --test: held-out inputs must not be "
                         "trained on");
    }
  if (!cfg.size)
    for (std::size_t i = 1; i < train_sizes.size(); ++i)
      if (train_sizes[i] != train_sizes[0])
        throw UsageError(
            "--train " + text("train") + ": images differ in size (" + cfg.train[0].name + " is " +
            std::to_string(train_sizes[0].first) + "x" + std::to_string(train_sizes[0].second) +
            ", " + cfg.train[i].name + " is " + std::to_string(train_sizes[i].first) + "x" +
            std::to_string(train_sizes[i].second) + "); resize them with --size N or WxH");
  return cfg;
}

// The launch shapes searched: --wg, --vec and --py, or the device's defaults.
std::vector<WorkGroup> tune_shapes(const cxxopts::ParseResult &args, bool cpu_device) {
  auto given = [&](const char *name) { return args.count(name) > 0; };
  auto text = [&](const char *name) { return args[name].as<std::string>(); };
  const std::vector<WorkGroup> wgs = given("wg")  ? parse_wg_list(text("wg"))
                                     : cpu_device ? cpu_wg_candidates()
                                                  : gpu_wg_candidates();
  // PY 6 on GPUs: a whole number of rows:2 and rows:3 periods per work-item, where their
  // fused gather folds to compile-time offsets.
  const std::string default_vec = cpu_device ? "1" : "1,4";
  const std::string default_py = cpu_device ? "1" : "1,4,6";
  return with_outputs_per_item(wgs, parse_vec_list(given("vec") ? text("vec") : default_vec),
                               parse_py_list(given("py") ? text("py") : default_py));
}

// What depends on the device: the binary cache, the launch shapes and the energy counter (the
// tune's and each --devices worker's alike).
std::unique_ptr<EnergyCounter> set_up_on_device(const cxxopts::ParseResult &args, ClEnv &env,
                                                TuneConfig &cfg) {
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, cfg.kernel_root);
  cfg.shapes = tune_shapes(args, env.info().is_cpu());
  const bool gpu = env.info().is_gpu() && !env.info().is_cpu();
  cfg.cold = cfg.cache == "cold" || (cfg.cache == "auto" && gpu);
  if (cfg.cold) {  // one size for the tune and every process it starts
    cfg.flush_bytes = cold_flush_bytes(
        env.info(), [&] { return command_cache_probe(env, cfg.kernel_root).cache_bytes; });
    ::setenv("KPERF_FLUSH_BYTES", std::to_string(cfg.flush_bytes).c_str(), 1);
  }
  std::unique_ptr<EnergyCounter> energy =
      open_energy_counter(cfg.energy_spec, env, cfg.energy_absent_reason);
  cfg.energy = energy.get();
  return energy;
}

// Per budget, the canary's selections beside the static choice.
void print_selections(const nlohmann::ordered_json &summary) {
  print_selections_header("app");
  for (const auto &[app, j] : summary.items())
    for (const auto &c : j["choices"])
      if (c.contains("select")) print_selection(app, c, c["select"], j["canary"]["tracking"]);
}

// The choices as a table on stdout.
void print_choices(const nlohmann::ordered_json &summary) {
  std::printf("%-10s %7s  %-44s %-10s %8s %9s %9s %9s  %s\n", "app", "budget", "chosen", "wg",
              "speedup", "train", "test p", "test max", "holds");
  for (const auto &[app, j] : summary.items())
    for (const auto &c : j["choices"]) {
      if (c["chosen"].is_null()) {
        std::printf("%-10s %6.2f%%  %s\n", app.c_str(), 100 * c["budget"].get<double>(),
                    c["verdict"].get<std::string>().c_str());
        continue;
      }
      const auto &ch = c["chosen"];
      const bool tested = c["test"].contains("percentile_error");
      std::printf("%-10s %6.2f%%  %-44s %-10s %7.2fx %8.3f%% %8.3f%% %8.3f%%  %s\n", app.c_str(),
                  100 * c["budget"].get<double>(), ch["variant"].get<std::string>().c_str(),
                  ch["wg"].get<std::string>().c_str(),
                  ch["speedup"].is_number() ? ch["speedup"].get<double>() : NAN,
                  100 * ch["train_error"].get<double>(),
                  tested ? 100 * c["test"]["percentile_error"].get<double>() : NAN,
                  tested ? 100 * c["test"]["max"].get<double>() : NAN,
                  c["holds"].is_null()     ? "unmeasured"
                  : c["holds"].get<bool>() ? "yes"
                                           : "NO");
    }
}

}  // namespace

namespace {

// The choices, the last lines of a finished tune, and its exit status.
int report_tune_end(const nlohmann::ordered_json &summary, std::size_t rows, std::size_t builds,
                    std::size_t faulted, std::size_t broken, const std::string &out_path) {
  print_choices(summary);
  for (const auto &[app, j] : summary.items())
    if (j.contains("canary")) {
      print_selections(summary);
      break;
    }
  std::fprintf(stderr, "done: %zu rows (%zu builds) written to %s\n", rows, builds,
               out_path.c_str());
  const std::vector<std::string> unmeasured = unmeasured_verdicts(summary);
  for (const auto &line : unmeasured) std::fprintf(stderr, "kperf: %s\n", line.c_str());
  if (broken) report_broken_truths(broken);
  if (faulted == 0 && unmeasured.empty()) return broken ? kExitFaulted : 0;
  std::fprintf(stderr,
               "kperf: %zu configuration%s faulted the device (device_fault rows, dropped from the "
               "search); %zu verdict%s unmeasured\n",
               faulted, faulted == 1 ? "" : "s", unmeasured.size(),
               unmeasured.size() == 1 ? "" : "s");
  return kExitFaulted;
}

// --devices: this process measures on the first; a worker process on each of the others.
std::vector<std::string> tune_devices_of(const cxxopts::ParseResult &args, int argc, char **argv,
                                         TuneConfig &cfg) {
  if (!args.count("devices")) return {};
  const std::vector<std::string> devices =
      resolve_tune_devices(args["devices"].as<std::string>(), args["device"].as<std::string>());
  if (devices.size() > 1) {
    cfg.worker_devices.assign(devices.begin() + 1, devices.end());
    cfg.command_args.assign(argv + 1, argv + argc);
  }
  return devices;
}

// Where the choices' outputs go without --save-outputs: beside the document.
std::string default_outputs_dir(const std::string &out_path) {
  return (fs::path(out_path).parent_path() / (fs::path(out_path).stem().string() + "-outputs"))
      .string();
}

}  // namespace

int cmd_tune(int argc, char **argv, const std::string &command_line) {
  const cxxopts::ParseResult args = parse_command(tune_options(), argc, argv);
  TuneConfig cfg = tune_config(args);
  auto given = [&](const char *name) { return args.count(name) > 0; };
  auto text = [&](const char *name) { return args[name].as<std::string>(); };
  if (given("resume") && !given("out")) throw UsageError("--resume needs --out FILE");
  if (given("out")) require_writable(text("out"));

  const std::vector<std::string> devices = tune_devices_of(args, argc, argv, cfg);
  const nlohmann::ordered_json devices_json =
      devices.empty() ? nlohmann::ordered_json(nullptr) : tune_devices_json(devices);
  ClEnv env(choose_device_entry(devices.empty() ? text("device") : devices[0]));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  const std::unique_ptr<EnergyCounter> energy = set_up_on_device(args, env, cfg);
  if (cfg.energy_objective && !cfg.energy)
    throw UsageError("--objective energy: " + cfg.energy_absent_reason);

  const std::string out_path = out_path_or_default(args, "kperf-tune", env.info().name);
  cfg.outputs_dir = given("save-outputs") ? text("save-outputs") : default_outputs_dir(out_path);
  require_writable_dir("--save-outputs", cfg.outputs_dir);

  const nlohmann::ordered_json fingerprint = tune_fingerprint(env, cfg, devices_json);
  std::vector<TuneRow> resumed;
  nlohmann::ordered_json earlier_harness;  // what the sessions before this --resume spent
  if (given("resume") && fs::exists(out_path))
    resumed = resumed_tune_rows(out_path, fingerprint, earlier_harness);
  // After a fault: what the earlier measuring processes finished, the faulting rows among them.
  add_journal_rows(resumed);
  cfg.progress = !given("quiet") && ::isatty(STDERR_FILENO);
  catch_interrupts();

  const auto start = std::chrono::steady_clock::now();
  Tuner tuner(env, cfg, resumed);
  auto write = [&](const std::vector<TuneRow> &rows, bool complete,
                   const nlohmann::ordered_json &error) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = kSchemaVersion;
    doc["kind"] = "tune";
    doc["tune_schema_version"] = kTuneSchemaVersion;
    nlohmann::ordered_json ctx = base_context(command_line, env, cfg.kernel_root);
    ctx["tune"] = tune_context(cfg, text("train"), text("test"), devices_json);
    ctx["warmup"] = cfg.warmup;
    ctx["reps"] = cfg.reps;
    ctx["extra_build_options"] = cfg.extra_build_options;
    ctx["copy_gbps"] = tuner.copy_gbps();
    ctx["binary_cache"] = binary_cache_json(env, binary_cache);
    ctx["fingerprint"] = fingerprint;
    ctx["axis_defaults"] = axis_defaults_json();
    ctx["complete"] = complete;
    if (!error.is_null()) ctx["error"] = error;
    ctx["harness"] =
        tune_harness(tuner.phases_json(), start, env.builds_done(), rows.size(), earlier_harness);
    doc["context"] = ctx;
    doc["tune"] = complete ? tuner.summary_json() : nlohmann::ordered_json(nullptr);
    doc["results"] = nlohmann::ordered_json::array();
    for (const auto &r : rows) doc["results"].push_back(to_json(r));
    write_document_atomic(out_path, doc.dump() + "\n");
  };
  bool complete = false;
  try {
    complete = tuner.run([&](const std::vector<TuneRow> &rows) { write(rows, false, nullptr); });
  } catch (const DeviceLost &e) {
    // Under a supervisor the next process measures on; alone, the tune ends with what it has.
    if (supervised()) exit_for_restart();
    write(tuner.rows(), false, {{"kind", "device_fault"}, {"message", e.what()}});
    std::fprintf(stderr, "kperf: device fault in %s; %zu rows kept in %s (complete: false)\n",
                 e.what(), tuner.rows().size(), out_path.c_str());
    return kExitFaulted;
  } catch (const std::exception &e) {
    // The rows measured so far are kept for --resume (complete: false, with the error).
    if (tuner.rows().size() <= resumed.size()) throw;
    write(tuner.rows(), false, error_json(e));
    rethrow_with_note(e, "; " + std::to_string(tuner.rows().size()) + " rows kept in " + out_path +
                             " (complete: false; continue with --resume)");
  }
  const std::size_t faulted =
      std::count_if(tuner.rows().begin(), tuner.rows().end(),
                    [](const TuneRow &r) { return r.row.device_faulted(); });
  if (tuner.stopped()) {
    write(tuner.rows(), false, {{"kind", "device_fault"}, {"message", journal_stop()}});
    std::fprintf(stderr, "kperf: stopped: %s; %zu rows written to %s (%zu faulted)\n",
                 journal_stop().c_str(), tuner.rows().size(), out_path.c_str(), faulted);
    return faulted ? kExitFaulted : 1;
  }
  write(tuner.rows(), complete, nullptr);
  if (!complete) {
    std::fprintf(stderr, "interrupted: %zu rows written to %s (continue with --resume)\n",
                 tuner.rows().size(), out_path.c_str());
    return kExitInterrupted;
  }
  const std::size_t broken =
      std::count_if(tuner.rows().begin(), tuner.rows().end(),
                    [](const TuneRow &r) { return r.row.reference_failed(); });
  return report_tune_end(tuner.summary_json(), tuner.rows().size(), env.builds_done(), faulted,
                         broken, out_path);
}

int tune_stage_worker_main(int argc, char **argv) {
  if (argc != 2)
    throw UsageError("usage: kperf __tune-stage REQUEST (kperf tune --devices starts it)");
  const nlohmann::json request = nlohmann::json::parse(read_document(argv[1]));
  // The tune's own arguments, read as the tune read them, so that the apps, inputs, axes and
  // shapes are the same; then this device and the share of the request.
  std::vector<std::string> words = {"tune"};
  for (const auto &a : request.at("args")) words.push_back(a.get<std::string>());
  std::vector<char *> tune_argv;
  for (auto &w : words) tune_argv.push_back(w.data());
  tune_argv.push_back(nullptr);
  const cxxopts::ParseResult args =
      parse_command(tune_options(), static_cast<int>(words.size()), tune_argv.data());
  TuneConfig cfg = tune_config(args);
  ClEnv env(choose_device_entry(request.at("device").get<std::string>()));
  const std::unique_ptr<EnergyCounter> energy = set_up_on_device(args, env, cfg);
  cfg.outputs_dir = request.at("outputs_dir").get<std::string>();
  catch_interrupts();
  // After a fault: the rows earlier measuring processes of this share finished.
  std::vector<TuneRow> journaled;
  for (const auto &j : journal_rows()) journaled.push_back(tune_row_from_json(j));
  Tuner tuner(env, cfg, journaled);
  const std::string rows_path = request.at("rows").get<std::string>();
  auto write = [&](const std::vector<TuneRow> &rows) {
    std::vector<ResultRow> plain;
    for (const auto &r : rows) plain.push_back(r.row);
    write_stage_rows(rows_path, plain, tuner.copy_gbps(), tuner.phases_json()["phases_s"]);
  };
  bool complete = false;
  try {
    complete = tuner.run_share(request, write);
  } catch (const DeviceLost &) {
    write(tuner.rows());
    if (supervised()) exit_for_restart();
    throw;
  }
  write(tuner.rows());
  return complete ? 0 : kExitInterrupted;
}

}  // namespace kperf
