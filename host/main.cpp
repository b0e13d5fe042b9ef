// kperf command line: `kperf devices` lists OpenCL devices, `kperf run` benchmarks
// perforated kernels and writes results as JSON (SPEC sections 8-9).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>

#include "cl_env.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "compile_workers.hpp"
#include "io.hpp"
#include "kperf_git_sha.h"  // generated at build time
#include "parallel.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "synthetic.hpp"
#include "tune_command.hpp"

namespace fs = std::filesystem;
using namespace kperf;

namespace {

void print_devices_text(const std::vector<DeviceEntry>& entries) {
  for (const auto& e : entries) {
    const DeviceInfo& d = e.info;
    std::printf("%d:%d  %s  [%s]\n", d.platform_index, d.device_index, d.name.c_str(), d.type.c_str());
    std::printf("      platform        %s (%s)\n", d.platform_name.c_str(), d.platform_version.c_str());
    std::printf("      vendor          %s, driver %s\n", d.vendor.c_str(), d.driver_version.c_str());
    std::printf("      OpenCL C        %s\n", d.opencl_c_version.c_str());
    std::printf("      compute units   %u at %u MHz\n", d.compute_units, d.max_clock_mhz);
    std::printf("      global memory   %llu MiB (max allocation %llu MiB), unified: %s\n",
                static_cast<unsigned long long>(d.global_mem_size >> 20),
                static_cast<unsigned long long>(d.max_mem_alloc_size >> 20),
                d.unified_memory ? "yes" : "no");
    std::printf("      local memory    %llu KiB, type %s\n",
                static_cast<unsigned long long>(d.local_mem_size >> 10), d.local_mem_type.c_str());
    std::string items;
    for (auto s : d.max_work_item_sizes) items += (items.empty() ? "" : "x") + std::to_string(s);
    std::printf("      work-group      max %zu, max item sizes %s\n", d.max_work_group_size, items.c_str());
    std::printf("      timer           %zu ns resolution\n", d.profiling_timer_resolution_ns);
  }
}

int cmd_devices(int argc, char** argv) {
  cxxopts::Options options("kperf devices", "List every OpenCL platform and device");
  options.add_options()("json", "print JSON")("h,help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  const auto entries = enumerate_devices();
  if (args.count("json")) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = kSchemaVersion;
    doc["devices"] = nlohmann::ordered_json::array();
    for (const auto& e : entries) doc["devices"].push_back(to_json(e.info));
    std::cout << doc.dump(2) << "\n";
  } else {
    print_devices_text(entries);
  }
  return 0;
}

std::string joined_command_line(int argc, char** argv) {
  std::string out = "kperf";
  for (int i = 0; i < argc; ++i) out += std::string(" ") + argv[i];
  return out;
}


int cmd_run(int argc, char** argv, const std::string& command_line) {
  cxxopts::Options options("kperf run", "Benchmark perforated kernels and write JSON results");
  // clang-format off
  options.add_options()
    ("apps", "apps: gaussian3,gaussian5,sobel3,sobel5,median,inversion,hotspot,bilateral or all", cxxopts::value<std::string>()->default_value("all"))
    ("schemes", "schemes: accurate,stencil,rows1,rows2,rows:K,cols:K or all", cxxopts::value<std::string>()->default_value("accurate,stencil,rows1,rows2"))
    ("recon", "reconstructions: nn,li or all", cxxopts::value<std::string>()->default_value("nn"))
    ("load", "load paths: local (tile), global (no local memory: Paraprox's baseline), image; a list", cxxopts::value<std::string>()->default_value("local"))
    ("output", "output schemes: none, rows:K, cols:K, center:K (Paraprox); a list", cxxopts::value<std::string>()->default_value("none"))
    ("output-recon", "output reconstructions: nn,li or all", cxxopts::value<std::string>()->default_value("nn"))
    ("precision", "storage precision: f32, f16in (half input), f16 (half input and output); a list", cxxopts::value<std::string>()->default_value("f32"))
    ("perforate", "where rows:K / cols:K perforate: device, host (the host uploads only kept lines); a list", cxxopts::value<std::string>()->default_value("device"))
    ("binary-cache", "keep compiled program binaries in DIR (keyed by the contents of every kernel and scheme file, the options, device and driver); later runs load them instead of compiling", cxxopts::value<std::string>())
    ("metrics-on", "where error metrics are computed: auto (the device if a GPU with double precision), device, host", cxxopts::value<std::string>()->default_value("auto"))
    ("cold", "flush the cache before every timed sample (a fill of a buffer larger than the last-level cache)")
    ("transfers", "also time upload (pinned memory), host packing and download per repetition: end-to-end times")
    ("relax", "barrier relaxation: none, skip (barrier after the tile fill removed); a list", cxxopts::value<std::string>()->default_value("none"))
    ("iterations-skip", "hotspot launch perforation: fractions R in [0, 1) of the steps skipped; a list", cxxopts::value<std::string>()->default_value("0"))
    ("loop-skip", "window loop perforation (bilateral): 1 (every tap), 2 (every other tap, weights renormalised); a list", cxxopts::value<std::string>()->default_value("1"))
    ("weights", "bilateral's spatial weights: table, computed (exp() at every tap); a list", cxxopts::value<std::string>()->default_value("table"))
    ("bilateral-sigmas", "bilateral's sigma_color,sigma_space", cxxopts::value<std::string>()->default_value("25,2"))
    ("wg", "work-groups WXxWY,... or auto (default: auto on GPUs, a short list on CPUs)", cxxopts::value<std::string>())
    ("input", "image, .npy, directory or synthetic:NAME (smooth, noise, zoneplate, document, all); repeatable", cxxopts::value<std::vector<std::string>>())
    ("size", "resize/generate inputs to N or WxH; a list runs each size", cxxopts::value<std::string>())
    ("temp", "hotspot temperature grid (Rodinia text or .npy)", cxxopts::value<std::string>())
    ("power", "hotspot power grid (Rodinia text or .npy)", cxxopts::value<std::string>())
    ("iterations", "hotspot steps per sample", cxxopts::value<std::string>()->default_value("60"))
    ("vec", "outputs per work-item along x, a list of 1, 2, 4 (4: float4 loads and stores)", cxxopts::value<std::string>()->default_value("1"))
    ("py", "outputs per work-item along y, a list of 1..16 (taller blocks, same work-items)", cxxopts::value<std::string>()->default_value("1"))
    ("device", "P:D or a device-name substring (default: first GPU, else first device)", cxxopts::value<std::string>()->default_value(""))
    ("warmup", "untimed launches per configuration", cxxopts::value<std::string>()->default_value("50"))
    ("reps", "timed launches per configuration", cxxopts::value<std::string>()->default_value("50"))
    ("out", "results JSON path (default: kperf-<device>-<time>.json)", cxxopts::value<std::string>())
    ("save-outputs", "directory for each output grid as float32 .npy", cxxopts::value<std::string>())
    ("preset", "paper: the HPCS'19 method (512^2, 50+50 launches, its 6 apps and hotspot, 4 schemes, nn, full sweep); bilateral-phases: SagivTech's four bilateral phases (global + computed weights, global + table, local tile, image tile) at 256^2, 512^2, 1024^2, 10+50 launches", cxxopts::value<std::string>())
    ("resume", "skip configurations already in --out and append the rest")
    ("verify", "also check every output against the CPU model of its scheme")
    ("cl-options", "extra OpenCL build options for every kernel (e.g. -DKPERF_MATERIALIZE_ROWS=1); recorded in the context", cxxopts::value<std::string>())
    ("kernel-dir", "directory holding kernels/ and schemes/ (default: beside the binary)", cxxopts::value<std::string>())
    ("quiet", "no progress bar")
    ("h,help", "show this help");
  // clang-format on
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };

  // Presets only fill what the command line leaves open.
  std::string preset = given("preset") ? text("preset") : "";
  if (!preset.empty() && preset != "paper" && preset != "bilateral-phases")
    throw UsageError("unknown --preset '" + preset + "' (valid: paper, bilateral-phases)");
  const bool phases = preset == "bilateral-phases";
  auto preset_or = [&](const char* name, const char* preset_value) {
    return given(name) || !preset_value ? text(name) : std::string(preset_value);
  };
  std::string apps_text = preset_or(
      "apps", preset == "paper" ? "gaussian3,gaussian5,sobel3,sobel5,median,inversion,hotspot"
              : phases          ? "bilateral"
                                : nullptr);
  std::string schemes_text = preset_or("schemes", phases ? "accurate" : nullptr);
  std::string recon_text = text("recon");
  std::vector<std::pair<int, int>> sizes;
  if (given("size"))
    for (const auto& item : split_list(text("size"))) sizes.push_back(parse_size(item));
  if (preset == "paper" && !given("size")) sizes = {{512, 512}};
  if (phases && !given("size")) sizes = {{256, 256}, {512, 512}, {1024, 1024}};
  const std::optional<std::pair<int, int>> size =
      sizes.empty() ? std::nullopt : std::make_optional(sizes.front());

  RunConfig cfg;
  cfg.apps = parse_apps(apps_text);
  AxesSpec axes;
  axes.schemes = schemes_text;
  axes.recons = recon_text;
  axes.loads = preset_or("load", phases ? "global,local,image" : nullptr);
  axes.outputs = text("output");
  axes.output_recons = text("output-recon");
  axes.precisions = text("precision");
  axes.perforates = text("perforate");
  axes.relaxes = text("relax");
  axes.iterations_skips = text("iterations-skip");
  axes.loop_skips = text("loop-skip");
  axes.weights = preset_or("weights", phases ? "computed,table" : nullptr);
  cfg.variants = parse_variants(axes);
  cfg.params = parse_bilateral_sigmas(text("bilateral-sigmas"));
  if (phases && !given("load") && !given("weights"))
    // The four phases: computed weights only with global loads (phase 1).
    cfg.only = [](const AppDescriptor&, const Variant& v, const WorkGroup&) {
      return !v.computed_weights || std::string(v.load_path().name) == "global";
    };
  cfg.warmup = parse_count("warmup", preset_or("warmup", phases ? "10" : nullptr), 0, 1000000);
  cfg.reps = parse_count("reps", text("reps"), 1, 1000000);  // 50: SagivTech's count too
  cfg.iterations = parse_count("iterations", text("iterations"), 1, 1000000);
  cfg.sizes = sizes;
  cfg.verify = given("verify");
  cfg.transfers = given("transfers");
  cfg.cold = given("cold");
  cfg.metrics_on = text("metrics-on");
  if (cfg.metrics_on != "auto" && cfg.metrics_on != "device" && cfg.metrics_on != "host")
    throw UsageError("unknown --metrics-on '" + cfg.metrics_on + "' (valid: auto, device, host)");
  if (given("cl-options")) cfg.extra_build_options = text("cl-options");

  const std::vector<int> vecs = parse_vec_list(text("vec"));
  const std::vector<int> pys = parse_py_list(text("py"));
  std::optional<std::vector<WorkGroup>> wgs;
  bool wg_auto = preset == "paper";
  if (given("wg")) {
    if (text("wg") == "auto")
      wg_auto = true;
    else
      wgs = parse_wg_list(text("wg"));
  }

  cfg.kernel_root = given("kernel-dir") ? text("kernel-dir") : default_kernel_root().string();
  check_kernel_root(cfg.kernel_root);
  cfg.compile_worker_exe = executable_path().string();

  // Inputs: validated (fully decoded) before any work so a bad file stops the run up front.
  std::vector<std::string> input_specs;
  if (given("input")) {
    input_specs = args["input"].as<std::vector<std::string>>();
  } else {
    const fs::path photos = executable_dir() / ".." / "datasets" / "images";
    input_specs = {fs::exists(photos / "camera.png") ? (photos / "camera.png").string()
                                                    : std::string("synthetic:smooth")};
  }
  bool image_apps = false, hotspot = false;
  for (auto* a : cfg.apps) (a->is_hotspot ? hotspot : image_apps) = true;
  // The largest grid the run will allocate, checked against the device before any work.
  std::size_t largest = 0;
  // The smallest sides of any grid the run will use: an output scheme must fit in every one.
  int min_width = std::numeric_limits<int>::max(), min_height = min_width;
  auto saw_grid = [&](int w, int h) {
    largest = std::max(largest, static_cast<std::size_t>(w) * h);
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
  if (hotspot && !given("temp") && sizes.empty()) saw_grid(512, 512);
  if (given("temp") != given("power")) throw UsageError("--temp and --power go together");
  if (given("temp")) {
    cfg.temp_path = text("temp");
    cfg.power_path = text("power");
  }
  if (hotspot && given("temp")) {
    int w = 0, h = 0;
    if (size) std::tie(w, h) = *size;
    auto load = [&](const std::string& p) {
      return fs::path(p).extension() == ".npy" ? read_npy(p) : read_rodinia(p, w, h);
    };
    const Grid t = load(cfg.temp_path), p = load(cfg.power_path);
    saw_grid(t.width, t.height);
    if (t.width != p.width || t.height != p.height)
      throw InputError(cfg.power_path + ": power grid is " + std::to_string(p.width) + "x" +
                       std::to_string(p.height) + " but temperature grid " + cfg.temp_path +
                       " is " + std::to_string(t.width) + "x" + std::to_string(t.height));
  }

  for (const auto& v : cfg.variants)
    if (v.output.ky() > min_height || v.output.kx() > min_width)
      throw UsageError("--output " + v.output.canonical() + " is larger than the " +
                       std::to_string(min_width) + "x" + std::to_string(min_height) +
                       " grid (K must not exceed the grid's side along the scheme's axis)");

  if (given("save-outputs")) {
    cfg.save_outputs_dir = text("save-outputs");
    require_writable_dir("--save-outputs", cfg.save_outputs_dir);
  }
  if (given("out")) require_writable(text("out"));
  if (given("resume") && !given("out")) throw UsageError("--resume needs --out FILE");

  // Device.
  ClEnv env(choose_device_entry(text("device")));
  if (given("binary-cache")) enable_binary_cache(env, text("binary-cache"), cfg.kernel_root);
  const std::uint64_t need = static_cast<std::uint64_t>(largest) * sizeof(float);
  if (need > env.info().max_mem_alloc_size)
    throw UsageError("a grid of " + std::to_string(largest) + " elements needs " +
                     std::to_string(need >> 20) + " MiB per buffer, more than " + env.info().name +
                     " allows (CL_DEVICE_MAX_MEM_ALLOC_SIZE = " +
                     std::to_string(env.info().max_mem_alloc_size >> 20) + " MiB)");
  const bool cpu_device = env.info().type.find("CPU") != std::string::npos;
  cfg.wgs = with_outputs_per_item(
      wgs ? *wgs : (wg_auto || !cpu_device) ? spec_wg_candidates() : cpu_wg_candidates(), vecs, pys);

  const std::string out_path =
      given("out") ? text("out")
                   : "kperf-" + slug(env.info().name) + "-" +
                         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()) +
                         ".json";
  if (!given("out")) require_writable(out_path);

  std::vector<ResultRow> rows;
  if (given("resume") && fs::exists(out_path)) {
    nlohmann::json old;
    try {
      old = nlohmann::json::parse(read_file(out_path));
      for (const auto& j : old.at("results")) rows.push_back(row_from_json(j));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError("--resume: " + out_path + " is not a kperf results file (" + e.what() + ")");
    }
    for (const auto& r : rows) cfg.skip_keys.insert(r.key);
  }
  cfg.progress = !given("quiet") && ::isatty(STDERR_FILENO);

  catch_interrupts();

  Runner runner(env, cfg);
  const auto run_start = std::chrono::steady_clock::now();
  const std::size_t resumed_rows = rows.size();
  double write_s = 0;  // time spent writing result files
  auto write_results = [&](bool complete) {
    std::vector<ResultRow> annotated = rows;
    annotate(annotated);
    nlohmann::ordered_json doc;
    doc["schema_version"] = kSchemaVersion;
    nlohmann::ordered_json ctx = base_context(command_line, env);
    ctx["warmup"] = cfg.warmup;
    ctx["reps"] = cfg.reps;
    ctx["iterations"] = cfg.iterations;
    ctx["bilateral_sigmas"] = {{"color", cfg.params.sigma_color},
                               {"space", cfg.params.sigma_space}};
    ctx["extra_build_options"] = cfg.extra_build_options;
    ctx["copy_gbps"] = runner.largest_copy_gbps();
    ctx["copy"] = runner.copy_json();
    ctx["binary_cache"] = given("binary-cache")
                              ? nlohmann::ordered_json{{"dir", text("binary-cache")},
                                                       {"hits", env.binary_cache_hits()},
                                                       {"stores", env.binary_cache_stores()}}
                              : nlohmann::ordered_json(false);
    ctx["cold"] = cfg.cold ? nlohmann::ordered_json{{"flush_bytes", runner.flush_bytes()},
                                                    {"method",
                                                     "clEnqueueFillBuffer of flush_bytes "
                                                     "before every timed sample (hotspot: "
                                                     "before its first step)"}}
                           : nlohmann::ordered_json(false);
    if (cfg.transfers)
      ctx["transfers"] = {
          {"host_memory",
           "pinned: CL_MEM_ALLOC_HOST_PTR buffers, mapped once, as upload source and "
           "download target"},
          {"host_pack",
           "steady_clock around packing and/or half conversion into the pinned upload "
           "buffer, on " +
               std::to_string(host_threads()) +
               " threads; 0 for f32 "
               "device perforation, whose input already sits in pinned memory"},
          {"end_to_end",
           "host_pack + write + kernels + read, per repetition; the queue drains "
           "between repetitions"}};
    ctx["complete"] = complete;
    // Harness overhead: this run's wall time against the kernel time it measured.
    double timed_ns = 0;
    for (std::size_t i = resumed_rows; i < rows.size(); ++i)
      for (auto s : rows[i].samples_ns) timed_ns += static_cast<double>(s);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    nlohmann::ordered_json phases = runner.phases_json();
    phases["write"] = write_s;  // the checkpoints written before this one
    ctx["harness"] = {{"wall_s", wall_s},
                      {"timed_kernel_s", timed_ns * 1e-9},
                      {"builds", env.builds_done()},
                      {"compile_workers", runner.compile_workers_json()},
                      {"metrics", runner.metrics_json()},
                      {"configurations", rows.size() - resumed_rows},
                      {"phases_s", phases}};
    doc["context"] = ctx;
    doc["results"] = nlohmann::ordered_json::array();
    for (const auto& r : annotated) doc["results"].push_back(to_json(r));
    const auto write_start = std::chrono::steady_clock::now();
    write_file_atomic(out_path, doc.dump(1) + "\n");
    write_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
    return annotated;
  };

  auto last_checkpoint = std::chrono::steady_clock::now();
  runner.run([&](ResultRow row) {
    rows.push_back(std::move(row));
    // Checkpoint now and then, so a killed run leaves a valid file to --resume from.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_checkpoint > std::chrono::seconds(10)) {
      write_results(false);
      last_checkpoint = now;
    }
  });
  const bool complete = !runner.interrupted();
  const auto annotated = write_results(complete);
  std::cout << summary_table(annotated);
  std::fprintf(stderr, "%s: %zu results (%zu builds) written to %s\n",
               complete ? "done" : "interrupted", annotated.size(), env.builds_done(),
               out_path.c_str());
  return complete ? 0 : kExitInterrupted;
}

void print_usage() {
  std::printf(
      "kperf %s: OpenCL kernel-perforation benchmark suite\n\n"
      "usage:\n"
      "  kperf devices [--json]      list OpenCL platforms and devices\n"
      "  kperf run [options]         benchmark apps x schemes x work-groups (kperf run --help)\n"
      "  kperf tune [options]        fastest configuration within an error budget, checked on\n"
      "                              held-out inputs (kperf tune --help)\n"
      "  kperf --version\n",
      KPERF_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command_line = joined_command_line(argc - 1, argv + 1);
  try {
    if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
      print_usage();
      return argc < 2 ? kExitUsage : 0;
    }
    const std::string cmd = argv[1];
    if (cmd == "--version") {
      std::printf("kperf %s (%s, %s)\n", KPERF_VERSION, KPERF_GIT_SHA, KPERF_BUILD_TYPE);
      return 0;
    }
    if (cmd == "__compile-worker") return compile_worker_main(argc - 1, argv + 1);
    if (cmd == "devices") return cmd_devices(argc - 1, argv + 1);
    if (cmd == "run" || cmd == "tune") use_private_jit_cache();
    if (cmd == "run") return cmd_run(argc - 1, argv + 1, command_line);
    if (cmd == "tune") return cmd_tune(argc - 1, argv + 1, command_line);
    throw UsageError("unknown command '" + cmd + "' (valid: devices, run, tune)");
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "kperf: %s (see kperf %s --help)\n", e.what(), argc > 1 ? argv[1] : "");
    return kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitDevice;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "kperf: OpenCL error: %s\n", describe(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return 1;
  }
}
