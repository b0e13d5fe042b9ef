// kperf pipeline: chains of image apps on the device, each stage at its own approximation and
// launch shape, timed stage by stage and held to the chained double-precision truth.
#include "pipeline_command.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "axis_options.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "fault_journal.hpp"
#include "inputs.hpp"
#include "metrics.hpp"
#include "pipeline.hpp"
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
    ("out", "results JSON path (default: kperf-pipeline-<device>-<time>.json)", cxxopts::value<std::string>())
    ("save-outputs", "directory for each chain's final output as float32 .npy, named in the row's output_file (each earlier stage's of separate launches in the stage's)", cxxopts::value<std::string>());
  // clang-format on
  add_chain_options(options, "50");
  return options;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

}  // namespace

StageSpace parse_stage_options(const std::string& where, const std::string& text) {
  cxxopts::Options options("kperf pipeline --stage", "");
  // clang-format off
  options.add_options()
    ("wg", "", cxxopts::value<std::string>()->default_value("16x8"))
    ("vec", "", cxxopts::value<std::string>()->default_value("1"))
    ("py", "", cxxopts::value<std::string>()->default_value("1"));
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
    space.shapes = with_outputs_per_item(parse_wg_list(args["wg"].as<std::string>()),
                                         parse_vec_list(args["vec"].as<std::string>()),
                                         parse_py_list(args["py"].as<std::string>()));
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

bool exact_chain(const std::vector<PipelineStage>& chain) {
  return std::all_of(chain.begin(), chain.end(),
                     [](const PipelineStage& s) { return is_exact(s.variant); });
}

// Every chain of the product of the stages' spaces, plus the accurate chains at every product of
// the stages' shapes (the baseline: the accurate chain, each stage at its best shape); fused, at
// every shape of the last stage.
std::vector<std::vector<PipelineStage>> chains_of(const std::vector<const AppDescriptor*>& apps,
                                                  const std::vector<StageSpace>& spaces,
                                                  const std::vector<bool>& fuse) {
  std::vector<std::vector<PipelineStage>> all;
  const Variant accurate = default_variant();
  for (const bool fused : fuse) {
    std::vector<std::vector<PipelineStage>> chains = {{}};
    for (std::size_t k = 0; k < apps.size(); ++k) {
      std::vector<Variant> variants = spaces[k].variants;
      if (std::none_of(variants.begin(), variants.end(),
                       [&](const Variant& v) { return v.id() == accurate.id(); }))
        variants.insert(variants.begin(), accurate);
      // A fused chain has one launch shape, the last stage's.
      const std::vector<WorkGroup> shapes =
          fused && k + 1 < apps.size() ? std::vector<WorkGroup>{WorkGroup{}} : spaces[k].shapes;
      std::vector<std::vector<PipelineStage>> next;
      for (const auto& prefix : chains)
        for (const auto& v : variants)
          for (const auto& wg : shapes) {
            auto chain = prefix;
            chain.push_back({apps[k], v, wg, fused});
            next.push_back(std::move(chain));
          }
      chains = std::move(next);
    }
    for (auto& chain : chains) {
      for (PipelineStage& s : chain) s.wg = fused ? chain.back().wg : s.wg;
      all.push_back(std::move(chain));
    }
  }
  return all;
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

const nlohmann::ordered_json* fastest_exact(const nlohmann::ordered_json& rows,
                                            const std::string& input) {
  const nlohmann::ordered_json* best[2] = {nullptr, nullptr};  // unfused, fused
  for (const auto& r : rows) {
    if (r["status"] != "ok" || !r["exact"].get<bool>() || r["input"]["name"] != input ||
        !r.contains("time_ns"))
      continue;
    const nlohmann::ordered_json*& b = best[r.value("fused", false) ? 1 : 0];
    if (!b || r["time_ns"]["median"].get<double>() < (*b)["time_ns"]["median"].get<double>())
      b = &r;
  }
  return best[0] ? best[0] : best[1];
}

ChainMeasurer::ChainMeasurer(PipelineRunner& runner, ChainTruth& truth, std::string pipeline)
    : runner_(runner), truth_(truth), pipeline_(std::move(pipeline)) {}

void ChainMeasurer::bind(const std::string& name, Grid grid, bool with_truth) {
  input_name_ = name;
  grid_ = std::move(grid);
  truth_grids_.clear();
  truth_problem_.clear();
  if (!with_truth) {
    runner_.set_input(name, grid_);
    return;
  }
  if (!truth_.problem().empty()) {
    truth_status_ = "build_failed";
    truth_problem_ = truth_.problem();
    runner_.set_input(name, grid_);
    return;
  }
  // A user app's truth kernel runs on the device: its fault is every chain's on this input.
  const nlohmann::ordered_json workload = {{"app", pipeline_}, {"input", name}};
  if (const auto reason = journaled_workload_fault(workload)) {
    truth_status_ = "device_fault";
    truth_problem_ = *reason;
    faulted_ = true;
    runner_.set_input(name, grid_);
    return;
  }
  journal_begin_workload(workload, "truth kernels");
  const auto start = std::chrono::steady_clock::now();
  try {
    truth_grids_ = truth_.of(grid_);
  } catch (const cl::Error& e) {
    truth_status_ = "device_fault";
    truth_problem_ = "the chained truth's kernels raised " + describe(e);
    faulted_ = true;
    nlohmann::ordered_json fault = workload;
    fault["reason"] = truth_problem_;
    journal_workload_fault(fault);
    if (supervised()) exit_for_restart();
  }
  journal_end();
  truth_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check_truth();
  runner_.set_input(name, grid_, truth_grids_.empty() ? nullptr : &truth_grids_);
}

// A stage's truth that is non-finite on a finite input is broken (SPEC 15): every chain on this
// input is a reference_failed row naming the first such stage.
void ChainMeasurer::check_truth() {
  if (truth_grids_.empty() || count_nonfinite(grid_.data) != 0) return;
  for (std::size_t k = 0; k < truth_grids_.size(); ++k) {
    const std::vector<double>& t = truth_grids_[k].data;
    const auto bad = std::count_if(t.begin(), t.end(), [](double x) { return !std::isfinite(x); });
    if (bad == 0) continue;
    truth_status_ = "reference_failed";
    truth_problem_ =
        "stage " + std::to_string(k + 1) + ": " +
        broken_truth_reason(bad, static_cast<std::int64_t>(t.size()), truth_.reference(k));
    truth_grids_.clear();
    return;
  }
}

nlohmann::ordered_json ChainMeasurer::measure(const std::vector<PipelineStage>& chain,
                                              const nlohmann::ordered_json& fields,
                                              PipelineRunner::Mode mode) {
  const std::string key = chain_key(pipeline_, chain, input_name_, grid_.width, grid_.height);
  if (const auto done = journaled_row(key, fields)) {
    faulted_ = faulted_ || done->value("status", std::string()) == "device_fault";
    return nlohmann::ordered_json::parse(done->dump());
  }
  ChainOutcome outcome;
  outcome.stages.resize(chain.size());
  auto unmeasured = [&](const std::string& status, const std::string& reason) {
    outcome.status = status;
    outcome.reason = reason;
    return row_of(chain, outcome, fields);
  };
  if (!truth_problem_.empty()) return unmeasured(truth_status_, "the truth: " + truth_problem_);
  if (!journal_stop().empty()) return unmeasured("device_fault", "not measured: " + journal_stop());
  journal_begin(row_of(chain, outcome, fields), "chain runs");
  outcome = runner_.run(chain, mode, fields.value("stage", std::string()));
  if (!save_dir_.empty() && outcome.ok() && !outcome.stages.back().output.empty())
    runner_.save_output(outcome, save_dir_, key);
  const nlohmann::ordered_json row = row_of(chain, outcome, fields);
  journal_row(row);
  journal_end();
  if (outcome.status == "device_fault") {
    faulted_ = true;
    if (supervised() && runner_.device_lost()) exit_for_restart();
  }
  return row;
}

// One chain's row: every stage's time and its error against the chained truth, the chain's time and
// the last stage's error.
nlohmann::ordered_json ChainMeasurer::row_of(const std::vector<PipelineStage>& chain,
                                             const ChainOutcome& outcome,
                                             const nlohmann::ordered_json& fields) const {
  const int width = grid_.width, height = grid_.height;
  nlohmann::ordered_json row = {
      {"key", chain_key(pipeline_, chain, input_name_, width, height)},
      {"pipeline", pipeline_},
      {"input", {{"name", input_name_}, {"width", width}, {"height", height}}},
      {"status", outcome.status},
      {"fused", is_fused(chain)},
      {"exact", exact_chain(chain)}};
  for (auto it = fields.begin(); it != fields.end(); ++it) row[it.key()] = it.value();
  if (!outcome.ok()) row["reason"] = outcome.reason;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array(), between = stages;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    const StageOutcome& so = outcome.stages[k];
    nlohmann::ordered_json j = {{"app", s.app->name},
                                {"variant", s.variant.id()},
                                {"family", s.variant.family()},
                                {"wg", wg_label(s.wg.x, s.wg.y, s.wg.vec, s.wg.py)},
                                {"precision", s.variant.precision_info().name},
                                {"metric", metric_name(s.app->primary_metric)},
                                {"reference", truth_.reference(k)}};
    if (!so.samples_ns.empty()) j["time_ns"] = stats_json(summarize(so.samples_ns));
    if (so.errors) {
      j["error"] = so.errors->value(s.app->primary_metric);
      j["errors"] = to_json(*so.errors);
    }
    if (!so.build_log.empty()) j["build_log"] = so.build_log;
    if (!so.output_file.empty()) j["output_file"] = so.output_file;
    stages.push_back(std::move(j));
    if (k + 1 < chain.size()) between.push_back(intermediate_type(s.variant).name);
  }
  row["stages"] = std::move(stages);
  row["intermediate"] = std::move(between);
  if (!outcome.total_ns.empty()) {
    row["time_ns"] = stats_json(summarize(outcome.total_ns));
    row["samples_ns"] = outcome.total_ns;
  }
  if ((outcome.ok() || outcome.output_lost) && row["stages"].back().contains("error"))
    row["final_error"] = row["stages"].back()["error"];
  if (!outcome.output_file.empty()) row["output_file"] = outcome.output_file;
  return row;
}

namespace {

// The accurate chain's best time per input (every stage exact, at the shapes that made the fastest
// such chain; of separate launches where there is one), and every row's speedup against it.
void add_speedups(nlohmann::ordered_json& rows) {
  std::map<std::string, double> best;
  for (const auto& r : rows) {
    const std::string input = r["input"]["name"];
    if (best.count(input)) continue;
    if (const auto* base = fastest_exact(rows, input)) best[input] = (*base)["time_ns"]["median"];
  }
  for (auto& r : rows) {
    const auto it = best.find(r["input"]["name"].get<std::string>());
    if (r["status"] == "ok" && it != best.end() && r.contains("time_ns")) {
      r["accurate_time_ns"] = it->second;
      r["speedup"] = it->second / r["time_ns"]["median"].get<double>();
    }
  }
}

void print_rows(const nlohmann::ordered_json& rows) {
  std::printf("%-64s %10s %8s %10s  %s\n", "chain", "time us", "speedup", "final err",
              "stage errors");
  for (const auto& r : rows) {
    if (r["status"] != "ok") continue;
    std::string chain = r.value("fused", false) ? "fused: " : "", errors;
    for (const auto& s : r["stages"]) {
      chain += (chain.empty() || chain == "fused: " ? "" : " > ") +
               s["variant"].get<std::string>() + "@" + s["wg"].get<std::string>();
      if (!s.contains("error")) continue;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.3g%%", errors.empty() ? "" : " ",
                    100 * s["error"].get<double>());
      errors += buf;
    }
    std::printf("%-64s %10.1f %7.2fx %9.3g%%  %s\n", chain.c_str(),
                r["time_ns"]["median"].get<double>() / 1e3, r.value("speedup", 0.0),
                100 * r["final_error"].get<double>(), errors.c_str());
  }
}

}  // namespace

nlohmann::ordered_json fuse_json(const std::vector<bool>& fuse) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (bool f : fuse) list.push_back(f ? "all" : "none");
  return list;
}

void add_chain_options(cxxopts::Options& options, const char* reps_default) {
  // clang-format off
  options.add_options()
    ("pipeline", "blur-edges (gaussian5 then sobel3), denoise-edges (median then sobel3) or APP,APP[,...]", cxxopts::value<std::string>())
    ("stage", "K:OPTIONS, the axes and launch shapes of stage K (1-based) as kperf run's options, lists allowed, e.g. '2:--schemes rows:2 --recon nn,li --precision f16in --wg 32x4'; repeatable. A stage not named, or without --wg, runs at 16x8 (slow on GPUs: name a shape such as --wg 32x4 --vec 4 --py 4)", cxxopts::value<std::string>())
    ("size", "resize or generate the inputs at N or WxH (default: 512)", cxxopts::value<std::string>()->default_value("512"))
    ("warmup", "untimed chain runs per timed chain", cxxopts::value<std::string>()->default_value("10"))
    ("reps", "timed chain runs per timed chain", cxxopts::value<std::string>()->default_value(reps_default))
    ("cold", "flush the device's cache before every timed chain run")
    ("fuse", "none (a launch per stage), all (the whole chain in one launch, each stage's outputs in local memory, at each shape of the last stage), or none,all", cxxopts::value<std::string>()->default_value("none"));
  // clang-format on
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
  req.size = parse_size(text("size"));
  req.opt.pipeline = req.name;
  req.opt.kernel_root = kernel_root;
  if (args.count("cl-options")) req.opt.extra_build_options = text("cl-options");
  req.opt.warmup = parse_count("warmup", text("warmup"), 0, 1000000);
  req.opt.reps = parse_count("reps", text("reps"), 1, 1000000);
  req.opt.cold = args.count("cold") > 0;
  req.fuse = parse_fuse_list(text("fuse"));
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
  cxxopts::Options options = pipeline_options();
  const std::optional<cxxopts::ParseResult> parsed =
      parse_command(options, static_cast<int>(rest.size()), rest.data());
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  if (!given("pipeline")) throw UsageError("kperf pipeline needs --pipeline NAME or APP,APP");
  const ChainRequest req = read_chain_request(args, stage_values);
  const std::string& pipeline = req.name;
  const std::string& kernel_root = req.opt.kernel_root;
  const std::vector<const AppDescriptor*>& apps = req.apps;
  const std::vector<StageSpace>& spaces = req.spaces;
  const PipelineOptions& opt = req.opt;
  const std::pair<int, int> size = req.size;
  const std::vector<ImageSource> inputs =
      expand_inputs(given("input") ? args["input"].as<std::vector<std::string>>()
                                   : std::vector<std::string>{"synthetic:zoneplate"});
  if (given("out")) require_writable(text("out"));
  if (given("save-outputs")) require_writable_dir("--save-outputs", text("save-outputs"));

  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf-pipeline", env.info().name);
  require_writable(out_path);
  const auto chains = chains_of(apps, spaces, req.fuse);
  PipelineRunner runner(env, opt);
  runner.prebuild(chains);
  ChainTruth truth(&env, apps, kernel_root, opt.params, opt.extra_build_options);
  ChainMeasurer measurer(runner, truth, pipeline);
  if (given("save-outputs")) measurer.save_outputs_to(text("save-outputs"));
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ImageSource& src : inputs) {
    measurer.bind(src.name, load_image_source(src, size));
    for (const auto& chain : chains)
      rows.push_back(measurer.measure(chain, nlohmann::ordered_json::object()));
  }
  add_speedups(rows);
  nlohmann::ordered_json ctx = base_context(command_line, env, kernel_root);
  nlohmann::ordered_json stage_names = nlohmann::ordered_json::array();
  for (const auto* app : apps) stage_names.push_back(app->name);
  ctx["pipeline"] = {{"name", pipeline},
                     {"stages", stage_names},
                     {"warmup", opt.warmup},
                     {"reps", opt.reps},
                     {"cold", opt.cold},
                     {"fuse", fuse_json(req.fuse)},
                     {"truth",
                      "each stage's reference (a built-in's in double on the CPU, a user app's "
                      "accurate kernel in double) applied to the previous stage's truth"},
                     {"method",
                      "each chain run launches every stage in order on one queue, each stage "
                      "reading the previous stage's output buffer on the device; a stage's time is "
                      "its launches' profiling events, the chain's their sum, per run; medians "
                      "over --reps runs after --warmup; a fused chain (fused: true) is one launch, "
                      "timed as the chain alone. Errors: each stage's output against the "
                      "chained truth at that stage, by the stage app's primary metric (a fused "
                      "chain's last stage alone); outputs from one run into NaN-poisoned buffers "
                      "in canary bands. speedup: against the fastest accurate f32 chain of "
                      "separate launches on the same input (of fused ones where there is none)"}};
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  nlohmann::ordered_json doc = {{"schema_version", kSchemaVersion},
                                {"kind", "pipeline"},
                                {"pipeline_schema_version", 1},
                                {"context", ctx},
                                {"results", rows}};
  write_file_atomic(out_path, doc.dump(1) + "\n");
  print_rows(rows);
  std::fprintf(stderr, "done: %zu chains written to %s\n", rows.size(), out_path.c_str());
  const auto faulted = std::count_if(rows.begin(), rows.end(),
                                     [](const auto& r) { return r["status"] == "device_fault"; });
  const auto broken = std::count_if(
      rows.begin(), rows.end(), [](const auto& r) { return r["status"] == "reference_failed"; });
  if (broken) report_broken_truths(static_cast<std::size_t>(broken));
  if (!measurer.faulted()) return broken ? kExitFaulted : 0;
  std::fprintf(stderr, "kperf: %td chain%s lost to a device fault (device_fault rows)\n", faulted,
               faulted == 1 ? "" : "s");
  return kExitFaulted;
}

}  // namespace kperf
