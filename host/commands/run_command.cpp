// `kperf run`: options, presets and input checks, then the runner, with the results written
// atomically (checkpoints while it runs) as versioned JSON (SPEC sections 8-9).
#include "run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <set>

#include "axis_options.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "default_size.hpp"
#include "energy.hpp"
#include "fault_journal.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "option_groups.hpp"
#include "output_buffers.hpp"
#include "parallel.hpp"
#include "results.hpp"
#include "run_session.hpp"
#include "runner.hpp"
#include "shard.hpp"
#include "supervisor.hpp"

namespace kperf {

namespace fs = std::filesystem;

namespace {

// Expands every input and decodes it fully, so a bad file stops the run before any work; checks
// the --temp/--power pair and that every output scheme fits the smallest grid. Returns the
// largest grid's sides.
std::pair<int, int> check_inputs(const cxxopts::ParseResult& args,
                                 const std::vector<std::pair<int, int>>& sizes, RunConfig& cfg) {
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  const std::optional<std::pair<int, int>> size =
      sizes.empty() ? std::nullopt : std::make_optional(sizes.front());
  std::vector<std::string> input_specs;
  if (given("input")) {
    input_specs = args["input"].as<std::vector<std::string>>();
  } else {
    const fs::path photos = executable_dir() / ".." / "datasets" / "images";
    input_specs = {fs::exists(photos / "camera.png") ? (photos / "camera.png").string()
                                                     : std::string("synthetic:smooth")};
  }
  bool image_apps = false, own_inputs = false;
  for (auto* a : cfg.apps) (a->takes_images() ? image_apps : own_inputs) = true;
  // The largest grid the run will allocate, checked against the device before any work.
  std::pair<int, int> largest{0, 0};
  // The smallest sides of any grid the run will use: an output scheme must fit in every one.
  int min_width = std::numeric_limits<int>::max(), min_height = min_width;
  auto saw_grid = [&](int w, int h) {
    if (static_cast<long>(w) * h > static_cast<long>(largest.first) * largest.second)
      largest = {w, h};
    min_width = std::min(min_width, w);
    min_height = std::min(min_height, h);
  };
  for (const auto& [w, h] : sizes) saw_grid(w, h);
  if (image_apps) {
    cfg.image_inputs = expand_inputs(input_specs);
    for (const auto& src : cfg.image_inputs) {
      if (!src.synthetic.empty()) {
        if (sizes.empty()) saw_grid(512, 512);
        continue;  // generated at the run's sizes, nothing to validate
      }
      const Grid g = load_image_source(src, std::nullopt);  // decodes fully: a bad file fails here
      if (sizes.empty()) saw_grid(g.width, g.height);
    }
  }
  if (own_inputs && !given("temp") && sizes.empty()) saw_grid(512, 512);
  if (given("temp") != given("power")) throw UsageError("--temp and --power go together");
  if (given("temp")) {
    cfg.temp_path = text("temp");
    cfg.power_path = text("power");
  }
  if (own_inputs && given("temp")) {
    const Grid t = read_input_pair(cfg.temp_path, cfg.power_path, size).first;
    saw_grid(t.width, t.height);
  }

  for (const auto& v : cfg.variants)
    if (const auto misfit = output_misfit(v.output, min_width, min_height))
      throw UsageError("--output " + *misfit +
                       " (K must not exceed the grid's side along the scheme's axis)");

  return largest;
}

// kperf run's options (the axes' and the common ones added by the caller).
cxxopts::Options run_options() {
  cxxopts::Options options("kperf run", "Benchmark perforated kernels and write JSON results");
  // clang-format off
  options.add_options()
    ("apps", "apps: gaussian3,gaussian5,sobel3,sobel5,median,inversion,hotspot,bilateral or all; by default the papers' seven (all but bilateral)", cxxopts::value<std::string>()->default_value("gaussian3,gaussian5,sobel3,sobel5,median,inversion,hotspot"))
    ("metrics-on", "where error metrics are computed: auto (the device if a GPU with double precision), device, host", cxxopts::value<std::string>()->default_value("auto"))
    ("cold", "flush the cache before every timed sample (a fill of a buffer larger than the last-level cache)")
    ("shard", "I/N: measure shard I of N of the configurations (a deterministic, cost-balanced partition by app and variant, plus the baselines its speedups need); kperf merge joins the N files", cxxopts::value<std::string>())
    ("transfers", "also time upload (pinned memory), host packing and download per repetition: end-to-end times")
    ("bilateral-sigmas", "bilateral's sigma_color,sigma_space", cxxopts::value<std::string>()->default_value("25,2"))
    ("input", "image, .npy, directory or synthetic:NAME (smooth, noise, zoneplate, document, all); repeatable", cxxopts::value<std::vector<std::string>>())
    ("size", "resize/generate inputs to N or WxH; a list runs each size", cxxopts::value<std::string>())
    ("temp", "hotspot temperature grid (Rodinia text or .npy)", cxxopts::value<std::string>())
    ("power", "hotspot power grid (Rodinia text or .npy)", cxxopts::value<std::string>())
    ("iterations", "hotspot steps per sample", cxxopts::value<std::string>()->default_value("60"))
    ("max-cv", "noise-based stop: after --reps samples, more batches of --reps until the samples' coefficient of variation is at most this (e.g. 0.01) or --max-reps is reached; rows say why they stopped", cxxopts::value<std::string>())
    ("max-reps", "the most timed samples under --max-cv (default: 10 x --reps)", cxxopts::value<std::string>())
    ("rounds", "time each workload's configurations in R rounds, each round a share of --reps samples from every configuration in turn, so that a drift of the device's speed during the run reaches them all alike (1: each configuration whole, then the next)", cxxopts::value<std::string>()->default_value("1"))
    ("save-outputs", "directory for each output grid as float32 .npy", cxxopts::value<std::string>())
    ("preset", "paper: the HPCS'19 method (512^2, 50+50 launches, its 6 apps and hotspot, 4 schemes, nn, full sweep); bilateral-phases: SagivTech's four bilateral phases (global + computed weights, global + table, local tile, image tile) at 256^2, 512^2, 1024^2, 10+50 launches", cxxopts::value<std::string>())
    ("resume", "skip configurations already in --out and append the rest")
    ("verify", "also check every output against the CPU model of its scheme")
    ("dry-run", "print every configuration the run would measure as one JSON object a line on stdout, with its status: planned, or why it cannot run (judged before building); build, launch and write nothing");
  // clang-format on
  add_shape_options(
      options, "work-groups WXxWY,... or auto (default: auto on GPUs, a short list on CPUs)", "1");
  add_timing_options(options, "launches per configuration", "50", "50");
  add_energy_options(options, "");
  add_out_option(options, "kperf");
  add_axis_options(options, false);
  add_common_options(options);
  return options;
}

// What the command line (and a preset) asks for, before the device is known: the run's
// configuration, and the launch shapes to cross with the device's defaults.
struct RunRequest {
  RunConfig cfg;
  std::vector<std::pair<int, int>> sizes;
  std::optional<std::vector<WorkGroup>> wgs;
  bool wg_auto = false;
  bool outputs_given = false;  // --vec or --py: the shapes are the user's
  std::vector<int> vecs, pys;
  ShardSpec shard;
};

// Presets only fill what the command line leaves open.
RunRequest run_request(const cxxopts::ParseResult& args) {
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  std::string preset = given("preset") ? text("preset") : "";
  if (!preset.empty() && preset != "paper" && preset != "bilateral-phases")
    throw UsageError("unknown --preset '" + preset + "' (valid: paper, bilateral-phases)");
  const bool phases = preset == "bilateral-phases";
  auto preset_or = [&](const char* name, const char* preset_value) {
    return given(name) || !preset_value ? text(name) : std::string(preset_value);
  };
  RunRequest req;
  RunConfig& cfg = req.cfg;
  cfg.kernel_root = kernel_root_option(args);
  const std::vector<const AppDescriptor*> user_apps = load_apps(args, cfg.kernel_root);
  const std::string apps_text = preset_or(
      "apps", preset == "paper" ? "gaussian3,gaussian5,sobel3,sobel5,median,inversion,hotspot"
              : phases          ? "bilateral"
                                : nullptr);
  if (given("size"))
    for (const auto& item : split_list(text("size"))) req.sizes.push_back(parse_size(item));
  if (preset == "paper" && !given("size")) req.sizes = {{512, 512}};
  if (phases && !given("size")) req.sizes = {{256, 256}, {512, 512}, {1024, 1024}};

  cfg.apps =
      !user_apps.empty() && !given("apps") && preset.empty() ? user_apps : parse_apps(apps_text);
  AxesSpec axes = axes_from(args, false);
  axes.schemes = preset_or("schemes", phases ? "accurate" : nullptr);
  axes.loads = preset_or("load", phases ? "global,local,image" : nullptr);
  axes.kernel["weights"] = preset_or("weights", phases ? "computed,table" : nullptr);
  cfg.variants = parse_variants(axes);
  cfg.params = parse_bilateral_sigmas(text("bilateral-sigmas"));
  if (phases && !given("load") && !given("weights"))
    // The four phases: computed weights only with global loads (phase 1).
    cfg.only = [](const AppDescriptor&, const Variant& v, const WorkGroup&) {
      return kernel_value_name(v, "weights") == std::string("table") ||
             std::string(v.load_path().name) == "global";
    };
  cfg.warmup = parse_count("warmup", preset_or("warmup", phases ? "10" : nullptr), 0, 1000000);
  cfg.reps = parse_count("reps", text("reps"), 1, 1000000);  // 50: SagivTech's count too
  if (given("max-reps") && !given("max-cv")) throw UsageError("--max-reps needs --max-cv");
  if (given("max-cv")) {
    cfg.max_cv = parse_fraction("max-cv", text("max-cv"));
    cfg.max_reps = given("max-reps") ? parse_count("max-reps", text("max-reps"), 1, 10000000)
                                     : std::min(10 * cfg.reps, 10000000);
    if (cfg.max_reps < cfg.reps)
      throw UsageError("--max-reps " + std::to_string(cfg.max_reps) + " is below --reps " +
                       std::to_string(cfg.reps));
  }
  cfg.rounds = parse_count("rounds", text("rounds"), 1, 1000000);
  if (cfg.rounds > cfg.reps)
    throw UsageError("--rounds " + std::to_string(cfg.rounds) + " is above --reps " +
                     std::to_string(cfg.reps) + " (every round takes at least one sample)");
  if (cfg.rounds > 1 && cfg.max_cv > 0)
    throw UsageError(
        "--rounds and --max-cv cannot be combined (rounds fix every "
        "configuration's samples in advance)");
  cfg.iterations = parse_count("iterations", text("iterations"), 1, 1000000);
  cfg.sizes = req.sizes;
  cfg.verify = given("verify");
  cfg.transfers = given("transfers");
  cfg.cold = given("cold");
  check_energy_spec(text("energy"));
  cfg.energy_requested = text("energy") != "none";
  cfg.energy_options.window_s = parse_seconds("energy-window", text("energy-window"));
  cfg.energy_options.reps = parse_count("energy-reps", text("energy-reps"), 1, 1000);
  cfg.metrics_on = text("metrics-on");
  if (cfg.metrics_on != "auto" && cfg.metrics_on != "device" && cfg.metrics_on != "host")
    throw UsageError("unknown --metrics-on '" + cfg.metrics_on + "' (valid: auto, device, host)");
  if (given("cl-options")) cfg.extra_build_options = text("cl-options");

  req.vecs = parse_vec_list(text("vec"));
  req.pys = parse_py_list(text("py"));
  req.outputs_given = given("vec") || given("py");
  req.wg_auto = preset == "paper";
  if (given("wg")) {
    if (text("wg") == "auto")
      req.wg_auto = true;
    else
      req.wgs = parse_wg_list(text("wg"));
  }
  if (given("shard")) req.shard = parse_shard(text("shard"));
  cfg.compile_worker_exe = executable_path().string();
  return req;
}

// The default grid (default_size.hpp), set in the request: the sizes the runner makes its inputs
// at, and the largest grid for the memory check.
DefaultSize run_default_size(const cxxopts::ParseResult& args, ClEnv& env, RunRequest& req,
                             std::pair<int, int>& largest) {
  std::string sizes;
  for (const auto& [w, h] : req.sizes)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(w) + "x" + std::to_string(h);
  if (!req.sizes.empty())
    sizes +=
        args.count("size") ? " (--size)" : " (--preset " + args["preset"].as<std::string>() + ")";
  const std::string resumed =
      args.count("resume") && args.count("out") ? args["out"].as<std::string>() : "";
  return default_run_size(env, req.cfg, req.sizes, sizes, args.count("input") > 0,
                          args.count("dry-run") > 0, resumed, largest);
}

// The summary table, the warnings and the last line of a run, and its exit status.
int report_run_end(const std::vector<ResultRow>& annotated, bool stopped, bool complete,
                   std::size_t builds, const std::string& out_path, const std::string& size_line) {
  std::cout << size_line << "\n" << summary_table(annotated);
  std::size_t throttled = 0;
  for (const ResultRow& r : annotated)
    throttled += r.energy.is_object() && r.energy.value("throttled", false) ? 1 : 0;
  if (throttled)
    std::fprintf(stderr,
                 "warning: %zu rows were measured while the GPU was throttled (power or thermal; "
                 "their energy.windows[].clocks say which)\n",
                 throttled);
  const std::size_t faulted = std::count_if(annotated.begin(), annotated.end(),
                                            [](const ResultRow& r) { return r.device_faulted(); });
  const std::size_t broken = std::count_if(annotated.begin(), annotated.end(),
                                           [](const ResultRow& r) { return r.reference_failed(); });
  std::fprintf(stderr, "%s: %zu results (%zu builds) written to %s\n",
               stopped    ? "stopped"
               : complete ? "done"
                          : "interrupted",
               annotated.size(), builds, out_path.c_str());
  if (broken) report_broken_truths(broken);
  if (faulted == 0 && stopped) {
    std::fprintf(stderr, "kperf: stopped: %s\n", journal_stop().c_str());
    return broken ? kExitFaulted : 1;
  }
  if (faulted == 0 && broken == 0) return complete ? 0 : kExitInterrupted;
  if (faulted)
    std::fprintf(stderr, "kperf: %zu configuration%s faulted the device (device_fault rows)%s\n",
                 faulted, faulted == 1 ? "" : "s",
                 stopped ? ("; stopped: " + journal_stop()).c_str() : "");
  return kExitFaulted;
}

// The launch shapes a run sweeps: the user's, or the device kind's defaults.
std::vector<WorkGroup> launch_shapes(const RunRequest& req, bool cpu) {
  std::vector<WorkGroup> wgs = with_outputs_per_item(req.wgs                 ? *req.wgs
                                                     : (req.wg_auto || !cpu) ? spec_wg_candidates()
                                                                             : cpu_wg_candidates(),
                                                     req.vecs, req.pys);
  // A GPU's default sweep: the HPCS'19 work-groups at one output a work-item, and the blocks at
  // which kperf's kernels reach the copy bound there (at one output a work-item they reach about
  // half of it: on an H200 at 4096^2, gaussian3 79 us against 38 us at 32x4v4y2).
  if (!req.wgs && !req.wg_auto && !req.outputs_given && !cpu)
    for (const WorkGroup& wg : gpu_block_candidates()) wgs.push_back(wg);
  return wgs;
}

}  // namespace

int cmd_run(int argc, char** argv, const std::string& command_line) {
  const cxxopts::ParseResult args = parse_command(run_options(), argc, argv);
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  RunRequest req = run_request(args);
  RunConfig& cfg = req.cfg;

  // Inputs: validated (fully decoded) before any work so a bad file stops the run up front.
  std::pair<int, int> largest = check_inputs(args, req.sizes, cfg);
  if (given("save-outputs")) {
    cfg.save_outputs_dir = text("save-outputs");
    require_writable_dir("--save-outputs", cfg.save_outputs_dir);
  }
  if (given("out")) require_writable(text("out"));
  if (given("resume") && !given("out")) throw UsageError("--resume needs --out FILE");

  // Device.
  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, cfg.kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf", env.info().name);
  const DefaultSize default_size = run_default_size(args, env, req, largest);
  if (auto problem = grid_memory_problem(env.info(), largest.first, largest.second, 1))
    throw UsageError(*problem);
  // An explicit energy source that does not exist here stops the run before anything runs.
  const std::unique_ptr<EnergyCounter> energy =
      open_energy_counter(text("energy"), env, cfg.energy_absent_reason);
  cfg.energy = energy.get();
  cfg.wgs = launch_shapes(req, env.info().is_cpu());
  std::set<std::string> owned_units;
  if (req.shard.active()) owned_units = restrict_to_shard(cfg, req.shard);

  const nlohmann::ordered_json fingerprint = run_fingerprint(env, cfg);
  std::vector<ResultRow> rows;
  if (given("resume") && fs::exists(out_path)) rows = resumed_rows(out_path, fingerprint);
  for (const auto& r : rows) cfg.skip_keys.insert(r.key);
  // After a fault: what the earlier measuring processes finished, the faulting rows among them.
  for (const auto& j : journal_rows()) {
    ResultRow row = row_from_json(j);
    if (req.shard.active() && !owned_units.count(row.app + "/" + row.variant))
      row.shard_baseline = true;
    if (cfg.skip_keys.insert(row.key).second) rows.push_back(std::move(row));
  }
  cfg.progress = !given("quiet") && ::isatty(STDERR_FILENO) && !given("dry-run");
  catch_interrupts();

  if (given("dry-run")) {
    cfg.dry_run = true;
    Runner runner(env, cfg);
    runner.run([](const ResultRow& row) { std::cout << to_json(row).dump() << "\n"; });
    return 0;
  }
  Runner runner(env, cfg);
  RunDocument document(out_path, command_line, env, cfg, runner, binary_cache, fingerprint,
                       rows.size());
  auto last_checkpoint = std::chrono::steady_clock::now();
  const double checkpoint_s = checkpoint_interval_s();
  try {
    runner.run([&](ResultRow row) {
      if (req.shard.active() && !owned_units.count(row.app + "/" + row.variant))
        row.shard_baseline = true;
      rows.push_back(std::move(row));
      // Checkpoint now and then, so a killed run leaves a valid file to --resume from.
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_checkpoint).count() >= checkpoint_s) {
        document.write(rows, false, nullptr);
        last_checkpoint = now;
      }
    });
  } catch (const DeviceLost& e) {
    // The device faulted: under a supervisor the next process measures the rest; alone, the run
    // ends here with what it measured.
    if (supervised()) exit_for_restart();
    document.write(rows, false, {{"kind", "device_fault"}, {"message", e.what()}});
    std::fprintf(stderr, "kperf: device fault in %s; %zu results kept in %s (complete: false)\n",
                 e.what(), rows.size(), out_path.c_str());
    return kExitFaulted;
  } catch (const std::exception& e) {
    // Whatever ends the run early, the rows measured so far are kept (complete: false, with the
    // error); main() then prints the one line and exits non-zero.
    if (rows.size() <= document.resumed()) throw;
    document.write(rows, false, error_json(e));
    rethrow_with_note(e, "; " + std::to_string(rows.size()) + " results kept in " + out_path +
                             " (complete: false)");
  }
  const bool complete = !runner.interrupted();
  const auto annotated = document.write(
      rows, complete,
      runner.stopped()
          ? nlohmann::ordered_json{{"kind", "device_fault"}, {"message", journal_stop()}}
          : nlohmann::ordered_json(nullptr));
  return report_run_end(annotated, runner.stopped(), complete, env.builds_done(), out_path,
                        default_size.line);
}

}  // namespace kperf
