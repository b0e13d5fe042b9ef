// kperf pipeline: chains of image apps on the device, each stage at its own approximation and
// launch shape, timed stage by stage and held to the chained double-precision truth.
#include "pipeline_command.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "axis_options.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "inputs.hpp"
#include "metrics.hpp"
#include "pipeline.hpp"
#include "results.hpp"
#include "strings.hpp"
#include "supervisor.hpp"

namespace kperf {

namespace {

cxxopts::Options pipeline_options() {
  cxxopts::Options options("kperf pipeline",
                           "Run chains of image apps, each stage's output the next one's input on "
                           "the device, every stage at its own approximation");
  // clang-format off
  options.add_options()
    ("input", "image, .npy, directory or synthetic:NAME; repeatable (default: synthetic:zoneplate)", cxxopts::value<std::vector<std::string>>())
    ("out", "results JSON path (default: kperf-pipeline-<device>-<time>.json)", cxxopts::value<std::string>());
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

// Every stage's space from the --stage values: a stage named twice, or one the chain does not
// have, is refused.
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

std::string stage_label(const PipelineStage& s) {
  return s.app->name + ":" + s.variant.id() + "@" + wg_label(s.wg.x, s.wg.y, s.wg.vec, s.wg.py);
}

bool exact_stage(const PipelineStage& s) {
  return s.variant.is_accurate() && s.variant.output.none() && s.variant.precision_info().exact() &&
         !s.variant.host_perforate;
}

// Every chain of the product of the stages' spaces, plus the accurate chains at every product of
// the stages' shapes (the baseline: the accurate chain, each stage at its best shape).
std::vector<std::vector<PipelineStage>> chains_of(const std::vector<const AppDescriptor*>& apps,
                                                  const std::vector<StageSpace>& spaces) {
  std::vector<std::vector<PipelineStage>> chains = {{}};
  const Variant accurate = parse_variants([] {
                             AxesSpec a;
                             a.schemes = "accurate";
                             return a;
                           }())
                               .front();
  for (std::size_t k = 0; k < apps.size(); ++k) {
    std::vector<Variant> variants = spaces[k].variants;
    bool has_accurate = false;
    for (const auto& v : variants) has_accurate = has_accurate || v.id() == accurate.id();
    if (!has_accurate) variants.insert(variants.begin(), accurate);
    std::vector<std::vector<PipelineStage>> next;
    for (const auto& prefix : chains)
      for (const auto& v : variants)
        for (const auto& wg : spaces[k].shapes) {
          auto chain = prefix;
          chain.push_back({apps[k], v, wg});
          next.push_back(std::move(chain));
        }
    chains = std::move(next);
  }
  return chains;
}

// One chain's row: every stage's time and its error against the chained truth, the chain's time
// and the last stage's error.
nlohmann::ordered_json chain_row(const std::string& pipeline,
                                 const std::vector<PipelineStage>& chain,
                                 const ChainOutcome& outcome, const std::string& input,
                                 const std::vector<GridD>& truth) {
  const int width = truth[0].width, height = truth[0].height;
  std::string key = pipeline;
  for (const auto& s : chain) key += (key == pipeline ? "/" : " > ") + stage_label(s);
  key += "/" + input + "/" + std::to_string(width) + "x" + std::to_string(height);
  nlohmann::ordered_json row = {{"key", key},
                                {"pipeline", pipeline},
                                {"input", {{"name", input}, {"width", width}, {"height", height}}},
                                {"status", outcome.status}};
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
                                {"metric", metric_name(s.app->primary_metric)}};
    if (!so.samples_ns.empty()) j["time_ns"] = stats_json(summarize(so.samples_ns));
    if (outcome.ok()) {
      // An output element that is not finite where the truth is was never written, or computed
      // from values never loaded: not a measurement.
      std::size_t truth_nonfinite = 0;
      for (double t : truth[k].data) truth_nonfinite += !std::isfinite(t);
      const std::size_t nonfinite = count_nonfinite(so.output);
      if (nonfinite > truth_nonfinite && row["status"] == "ok") {
        row["status"] = "run_failed";
        row["reason"] = "stage " + std::to_string(k + 1) + " (" + s.app->name +
                        "): " + std::to_string(nonfinite) +
                        " output elements are not finite (the truth " + "has " +
                        std::to_string(truth_nonfinite) + ")";
      }
      const ErrorMetrics e = compute_errors(truth[k].data, so.output, width, height, false);
      j["error"] = e.value(s.app->primary_metric);
      j["errors"] = to_json(e);
    }
    if (!so.build_log.empty()) j["build_log"] = so.build_log;
    stages.push_back(std::move(j));
    if (k + 1 < chain.size()) between.push_back(intermediate_type(s.variant).name);
  }
  row["stages"] = std::move(stages);
  row["intermediate"] = std::move(between);
  if (!outcome.total_ns.empty()) {
    row["time_ns"] = stats_json(summarize(outcome.total_ns));
    row["samples_ns"] = outcome.total_ns;
  }
  if (row["status"] == "ok") row["final_error"] = row["stages"].back()["error"];
  return row;
}

// The accurate chain's best time per input (each stage accurate in f32, at the shapes that made
// the fastest chain), and every row's speedup against it.
void add_speedups(nlohmann::ordered_json& rows,
                  const std::vector<std::vector<PipelineStage>>& chains) {
  std::map<std::string, double> best;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    bool exact = r["status"] == "ok";
    for (const auto& s : chains[i % chains.size()]) exact = exact && exact_stage(s);
    if (!exact) continue;
    const std::string input = r["input"]["name"];
    const double t = r["time_ns"]["median"];
    if (!best.count(input) || t < best[input]) best[input] = t;
  }
  for (auto& r : rows) {
    const auto it = best.find(r["input"]["name"].get<std::string>());
    if (r["status"] == "ok" && it != best.end()) {
      r["accurate_time_ns"] = it->second;
      r["speedup"] = it->second / r["time_ns"]["median"].get<double>();
    }
  }
}

namespace {

void print_rows(const nlohmann::ordered_json& rows) {
  std::printf("%-64s %10s %8s %10s  %s\n", "chain", "time us", "speedup", "final err",
              "stage errors");
  for (const auto& r : rows) {
    if (r["status"] != "ok") continue;
    std::string chain, errors;
    for (const auto& s : r["stages"]) {
      chain += (chain.empty() ? "" : " > ") + s["variant"].get<std::string>() + "@" +
               s["wg"].get<std::string>();
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

void add_chain_options(cxxopts::Options& options, const char* reps_default) {
  // clang-format off
  options.add_options()
    ("pipeline", "blur-edges (gaussian5 then sobel3), denoise-edges (median then sobel3) or APP,APP[,...]", cxxopts::value<std::string>())
    ("stage", "K:OPTIONS, the axes and launch shapes of stage K (1-based) as kperf run's options, lists allowed, e.g. '2:--schemes rows:2 --recon nn,li --precision f16in --wg 32x4'; repeatable. A stage not named runs accurate at 16x8", cxxopts::value<std::string>())
    ("size", "resize or generate the inputs at N or WxH (default: 512)", cxxopts::value<std::string>()->default_value("512"))
    ("warmup", "untimed chain runs per timed chain", cxxopts::value<std::string>()->default_value("10"))
    ("reps", "timed chain runs per timed chain", cxxopts::value<std::string>()->default_value(reps_default))
    ("cold", "flush the device's cache before every timed chain run");
  // clang-format on
  add_common_options(options);
}

ChainRequest read_chain_request(const cxxopts::ParseResult& args,
                                const std::vector<std::string>& stage_values) {
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  ChainRequest req;
  const std::string kernel_root = kernel_root_option(args);
  check_kernel_root(kernel_root);
  load_builtin_apps(kernel_root);
  req.name = text("pipeline");
  try {
    req.apps = parse_pipeline(req.name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  req.spaces = stage_spaces(req.name, req.apps.size(), stage_values);
  req.size = parse_size(text("size"));
  req.opt.kernel_root = kernel_root;
  if (args.count("cl-options")) req.opt.extra_build_options = text("cl-options");
  req.opt.warmup = parse_count("warmup", text("warmup"), 0, 1000000);
  req.opt.reps = parse_count("reps", text("reps"), 1, 1000000);
  req.opt.cold = args.count("cold") > 0;
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

  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf-pipeline", env.info().name);
  require_writable(out_path);
  const auto chains = chains_of(apps, spaces);
  PipelineRunner runner(env, opt);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ImageSource& src : inputs) {
    const Grid input = load_image_source(src, size);
    const std::vector<GridD> truth = chain_truth(apps, input);
    for (const auto& chain : chains)
      rows.push_back(chain_row(pipeline, chain, runner.run(chain, input), src.name, truth));
  }
  add_speedups(rows, chains);
  nlohmann::ordered_json ctx = base_context(command_line, env);
  nlohmann::ordered_json stage_names = nlohmann::ordered_json::array();
  for (const auto* app : apps) stage_names.push_back(app->name);
  ctx["pipeline"] = {
      {"name", pipeline},
      {"stages", stage_names},
      {"warmup", opt.warmup},
      {"reps", opt.reps},
      {"cold", opt.cold},
      {"truth", "each stage's double-precision reference applied to the previous stage's truth"},
      {"method",
       "each chain run launches every stage in order on one queue, each stage reading the "
       "previous stage's output buffer on the device; a stage's time is its launches' "
       "profiling events, the chain's their sum, per run; medians over --reps runs after "
       "--warmup. Errors: each stage's output against the chained truth at that stage, by the "
       "stage app's primary metric; outputs from one run into NaN-poisoned buffers. speedup: "
       "against the fastest accurate f32 chain on the same input"}};
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  nlohmann::ordered_json doc = {{"schema_version", kSchemaVersion},
                                {"kind", "pipeline"},
                                {"pipeline_schema_version", 1},
                                {"context", ctx},
                                {"results", rows}};
  write_file_atomic(out_path, doc.dump(1) + "\n");
  print_rows(rows);
  std::fprintf(stderr, "done: %zu chains written to %s\n", rows.size(), out_path.c_str());
  return runner.device_lost() ? kExitFaulted : 0;
}

}  // namespace kperf
