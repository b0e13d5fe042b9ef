// kperf pipeline: chains of image apps on the device, each stage at its own approximation and
// launch shape, timed stage by stage and held to the chained double-precision truth.
#include "pipeline_command.hpp"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "axis_options.hpp"
#include "chain_measurer.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "default_size.hpp"
#include "fault_journal.hpp"
#include "gzip.hpp"
#include "inputs.hpp"
#include "metrics.hpp"
#include "option_groups.hpp"
#include "results.hpp"
#include "strings.hpp"
#include "supervisor.hpp"
#include "tune.hpp"

namespace kperf {

namespace {

cxxopts::Options pipeline_options() {
  cxxopts::Options options("kperf pipeline",
                           "Run chains of image apps, each stage's output the next one's input on "
                           "the device, every stage at its own approximation");
  // clang-format off
  options.add_options()
    ("input", "image, .npy, directory or synthetic:NAME; repeatable (default: synthetic:zoneplate)", cxxopts::value<std::vector<std::string>>())
    ("save-outputs", "directory for each chain's final output as float32 .npy, named in the row's output_file (each earlier stage's of separate launches in the stage's)", cxxopts::value<std::string>());
  // clang-format on
  add_out_option(options, "kperf-pipeline");
  add_chain_options(options, "50");
  return options;
}

// The words of one --stage value, split at spaces and tabs.
std::vector<std::string> split_words(const std::string& text) {
  std::istringstream stream(text);
  return {std::istream_iterator<std::string>(stream), std::istream_iterator<std::string>()};
}

}  // namespace

StageSpace parse_stage_options(const std::string& where, const std::string& text) {
  cxxopts::Options options("kperf pipeline --stage", "");
  // clang-format off
  options.add_options()
    ("wg", "", cxxopts::value<std::string>())
    ("vec", "", cxxopts::value<std::string>())
    ("py", "", cxxopts::value<std::string>());
  // clang-format on
  add_axis_options(options, false);
  std::vector<std::string> words = {"stage"};
  for (const auto& w : split_words(text)) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  try {
    const cxxopts::ParseResult args = options.parse(static_cast<int>(argv.size()), argv.data());
    if (!args.unmatched().empty())
      throw UsageError(where + ": unexpected argument '" + args.unmatched()[0] + "'");
    AxesSpec axes = axes_from(args, false);
    if (!args.count("schemes")) axes.schemes = "accurate";
    StageSpace space;
    space.variants = parse_variants(axes);
    auto text_or = [&](const char* name, const char* absent) {
      return args.count(name) ? args[name].as<std::string>() : std::string(absent);
    };
    space.shapes_given = args.count("wg") || args.count("vec") || args.count("py");
    space.shapes = with_outputs_per_item(parse_wg_list(text_or("wg", "16x8")),
                                         parse_vec_list(text_or("vec", "1")),
                                         parse_py_list(text_or("py", "1")));
    return space;
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(where + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(where + ": " + e.what());
  }
}

// Every stage's space from the --stage values: a stage named twice, or one the chain does not have,
// is refused.
std::vector<StageSpace> stage_spaces(const std::string& pipeline, std::size_t stages,
                                     const std::vector<std::string>& given) {
  std::vector<StageSpace> spaces(stages);
  std::set<std::size_t> named;
  for (const std::string& value : given) {
    const auto colon = value.find(':');
    const std::string index = value.substr(0, colon);
    if (colon == std::string::npos || index.empty() ||
        index.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--stage " + value + ": expected K:OPTIONS, K the stage's number from 1");
    const std::size_t k = std::stoul(index);
    if (k < 1 || k > stages)
      throw UsageError("--stage " + value + ": --pipeline " + pipeline + " has no stage " + index +
                       " (it has " + std::to_string(stages) + ")");
    if (!named.insert(k).second) throw UsageError("--stage " + index + " is given twice");
    spaces[k - 1] = parse_stage_options("--stage " + value, value.substr(colon + 1));
  }
  for (std::size_t k = 0; k < stages; ++k)
    if (!named.count(k + 1)) spaces[k] = parse_stage_options("stage", "");
  return spaces;
}

std::vector<bool> parse_fuse_list(const std::string& text) {
  std::vector<bool> out;
  for (const std::string& value : split_list(text)) {
    if (value != "none" && value != "all")
      throw UsageError("--fuse " + text + ": expected none, all or none,all");
    const bool fused = value == "all";
    if (std::find(out.begin(), out.end(), fused) != out.end())
      throw UsageError("--fuse " + text + ": " + value + " is given twice");
    out.push_back(fused);
  }
  if (out.empty()) throw UsageError("--fuse: expected none, all or none,all");
  return out;
}

std::vector<int> parse_fuse_rows_list(const std::string& text) {
  std::vector<int> out;
  for (const std::string& value : split_list(text)) {
    const int rows = parse_count("fuse-rows", value, 0, 1 << 20);
    if (std::find(out.begin(), out.end(), rows) != out.end())
      throw UsageError("--fuse-rows " + text + ": " + value + " is given twice");
    out.push_back(rows);
  }
  if (out.empty()) throw UsageError("--fuse-rows: expected a list of strip heights, e.g. 0,64,256");
  return out;
}

namespace {

// The table: each chain (its stages' variants, fused or not, on one input) at its fastest shapes;
// every shape's row is in the document.
void print_rows(const std::vector<ChainRow>& rows) {
  std::printf("%-64s %10s %8s %10s  %s\n", "chain (at its fastest shapes)", "time us", "speedup",
              "final err", "stage errors");
  std::map<std::string, const ChainRow*> best;
  std::vector<std::string> order;
  for (const ChainRow& r : rows) {
    if (!r.ok() || !r.time) continue;
    std::string id = r.input_name + (r.fused ? "|fused" + std::to_string(r.fuse_rows) : "|");
    for (const StageRow& s : r.stages) id += "|" + s.variant;
    auto [it, fresh] = best.emplace(id, &r);
    if (fresh) order.push_back(id);
    if (r.time->median < it->second->time->median) it->second = &r;
  }
  for (const std::string& id : order) {
    const ChainRow& r = *best.at(id);
    const std::string design = !r.fused      ? ""
                               : r.fuse_rows ? "fused-rows:" + std::to_string(r.fuse_rows) + ": "
                                             : "fused: ";
    std::string chain = design, errors;
    for (const StageRow& s : r.stages) {
      chain += (chain == design ? "" : " > ") + s.variant + "@" + s.wg;
      if (!s.error) continue;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.3g%%", errors.empty() ? "" : " ", 100 * *s.error);
      errors += buf;
    }
    std::printf("%-64s %10.1f %7.2fx %9.3g%%  %s\n", chain.c_str(), r.time->median / 1e3,
                r.speedup.value_or(0.0), 100 * r.final_error.value_or(NAN), errors.c_str());
  }
}

// On a GPU, the stages whose shapes the command line left open sweep gpu_chain_candidates(); on a
// CPU they keep 16x8.
void default_stage_shapes(std::vector<StageSpace>& spaces, const DeviceInfo& dev) {
  if (!dev.is_gpu() || dev.is_cpu()) return;
  for (StageSpace& space : spaces)
    if (!space.shapes_given) space.shapes = gpu_chain_candidates();
}

// The exit status: the fault status where a chain faulted the device or a truth is broken.
int chain_run_end(const std::vector<ChainRow>& rows, bool faulted) {
  std::size_t faults = 0, broken = 0;
  for (const ChainRow& r : rows) {
    faults += r.status == Status::kDeviceFault;
    broken += r.status == Status::kReferenceFailed;
  }
  if (broken) report_broken_truths(broken);
  if (!faulted) return broken ? kExitFaulted : 0;
  std::fprintf(stderr, "kperf: %zu chain%s lost to a device fault (device_fault rows)\n", faults,
               faults == 1 ? "" : "s");
  return kExitFaulted;
}

}  // namespace

void add_chain_options(cxxopts::Options& options, const char* reps_default) {
  // clang-format off
  options.add_options()
    ("pipeline", "blur-edges (gaussian5 then sobel3), denoise-edges (median then sobel3) or APP,APP[,...]", cxxopts::value<std::string>())
    ("stage", "K:OPTIONS, the axes and launch shapes of stage K (1-based) as kperf run's options, lists allowed, e.g. '2:--schemes rows:2 --recon nn,li --precision f16in --wg 32x4'; repeatable. A stage not named, or without --wg, --vec and --py, runs on a GPU at 32x4 and 32x8 with 4x4 outputs a work-item and 32x4 with 4x2, on a CPU at 16x8", cxxopts::value<std::string>())
    ("size", "resize or generate the inputs at N or WxH (default: a file at its own size; a synthetic input at 512x512, on a GPU kperf pipeline's at a grid its measured last-level cache cannot hold, as kperf run)", cxxopts::value<std::string>())
    ("cold", "flush the device's cache before every timed chain run")
    ("fuse", "none (a launch per stage), all (the whole chain in one launch, each stage's outputs in local memory, at each shape of the last stage), or none,all", cxxopts::value<std::string>()->default_value("none"))
    ("fuse-rows", "with --fuse all: the fused design, each value a set of fused chains: 0 the tile design, H the rolling design, each row of work-items streaming a strip of H rows (e.g. 0,64,256)", cxxopts::value<std::string>()->default_value("0"));
  // clang-format on
  add_timing_options(options, "chain runs per timed chain", "10", reps_default);
  add_common_options(options);
}

ChainRequest read_chain_request(const cxxopts::ParseResult& args,
                                const std::vector<std::string>& stage_values) {
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  ChainRequest req;
  const std::string kernel_root = kernel_root_option(args);
  try {
    load_apps(args, kernel_root);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  req.name = text("pipeline");
  try {
    req.apps = parse_pipeline(req.name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  req.spaces = stage_spaces(req.name, req.apps.size(), stage_values);
  if (args.count("size")) req.size = parse_size(text("size"));
  req.opt.kernel_root = kernel_root;
  if (args.count("cl-options")) req.opt.extra_build_options = text("cl-options");
  req.opt.warmup = parse_count("warmup", text("warmup"), 0, 1000000);
  req.opt.reps = parse_count("reps", text("reps"), 1, 1000000);
  req.opt.cold = args.count("cold") > 0;
  // Chains' errors go where the truth is: on the device wherever it computes in double; the
  // primary metric alone, as the search needs.
  req.opt.metrics_on = "device";
  req.opt.ssim = false;
  req.fuse = parse_fuse_list(text("fuse"));
  req.fuse_rows = parse_fuse_rows_list(text("fuse-rows"));
  if (args.count("fuse-rows") &&
      std::find(req.fuse.begin(), req.fuse.end(), true) == req.fuse.end())
    throw UsageError("--fuse-rows " + text("fuse-rows") +
                     ": the fused designs of --fuse all; --fuse " + text("fuse") +
                     " fuses nothing");
  return req;
}

std::vector<char*> take_stage_values(int argc, char** argv, std::vector<std::string>& stages) {
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--stage" && i + 1 < argc)
      stages.push_back(argv[++i]);
    else if (arg.rfind("--stage=", 0) == 0)
      stages.push_back(arg.substr(8));
    else
      rest.push_back(argv[i]);
  }
  return rest;
}

int cmd_pipeline(int argc, char** argv, const std::string& command_line) {
  std::vector<std::string> stage_values;
  std::vector<char*> rest = take_stage_values(argc, argv, stage_values);
  const cxxopts::ParseResult args =
      parse_command(pipeline_options(), static_cast<int>(rest.size()), rest.data());
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  if (!given("pipeline")) throw UsageError("kperf pipeline needs --pipeline NAME or APP,APP");
  ChainRequest req = read_chain_request(args, stage_values);
  req.opt.read_outputs = true;
  const CoreOptions& opt = req.opt;
  const std::vector<ImageSource> inputs =
      expand_inputs(given("input") ? args["input"].as<std::vector<std::string>>()
                                   : std::vector<std::string>{"synthetic:zoneplate"});
  if (given("out")) require_writable(text("out"));
  if (given("save-outputs")) require_writable_dir("--save-outputs", text("save-outputs"));

  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, opt.kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf-pipeline", env.info().name);
  require_writable(out_path);
  default_stage_shapes(req.spaces, env.info());
  const DefaultSize size = choose_default_size(env, opt.kernel_root, req.size.has_value(),
                                               given("size") ? text("size") : "", given("input"),
                                               false, {512, 512}, nullptr);
  if (size.size) req.size = size.size;
  req.default_size = size.json;
  const std::vector<Chain> chains = chains_of(req.apps, req.spaces, req.fuse, req.fuse_rows);
  Core core(env, opt);
  prebuild_chains(env, core, chains);
  TruthSource truths(&env, opt.kernel_root, opt.params, opt.extra_build_options);
  ChainMeasurer measurer(core, truths, req.name, req.apps);
  if (given("save-outputs")) measurer.save_outputs_to(text("save-outputs"));
  std::vector<ChainRow> rows;
  for (const ImageSource& src : inputs) {
    measurer.bind(src.name, load_image_source(src, req.size));
    for (const Chain& chain : chains) rows.push_back(measurer.measure(chain));
  }
  add_chain_speedups(rows);
  nlohmann::ordered_json ctx = base_context(command_line, env, opt.kernel_root);
  ctx["pipeline"] = pipeline_block(req);
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const ChainRow& r : rows) results.push_back(to_json(r));
  const nlohmann::ordered_json doc = {{"schema_version", kSchemaVersion},
                                      {"kind", "pipeline"},
                                      {"pipeline_schema_version", kPipelineSchemaVersion},
                                      {"context", ctx},
                                      {"results", results}};
  write_document_atomic(out_path, doc.dump(1) + "\n");
  std::printf("%s\n", size.line.c_str());
  print_rows(rows);
  std::fprintf(stderr, "done: %zu chains written to %s\n", rows.size(), out_path.c_str());
  return chain_run_end(rows, measurer.faulted());
}

}  // namespace kperf
