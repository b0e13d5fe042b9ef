// kperf tune --pipeline: its options, the chain tuner (tune/chain_tune.hpp) and --select
// canary's ladders (tune/chain_select.hpp) called in order, the document and the table.
#include <algorithm>
#include <cstdio>

#include "chain_select.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "gzip.hpp"
#include "metrics.hpp"
#include "option_groups.hpp"
#include "phases.hpp"
#include "pipeline_command.hpp"
#include "results.hpp"
#include "select_options.hpp"
#include "supervisor.hpp"
#include "tune.hpp"
#include "tune_command.hpp"

namespace kperf {

namespace {

using Json = nlohmann::ordered_json;

cxxopts::Options pipeline_tune_options() {
  cxxopts::Options options("kperf tune --pipeline",
                           "One end-to-end error budget over a chain of apps, each stage at its "
                           "own approximation, checked on held-out inputs");
  add_search_options(options, "the last stage's primary metric");
  add_out_option(options, "kperf-tune-pipeline");
  add_select_options(options, "chain");
  add_chain_options(options, "30");
  return options;
}

void print_chain_choices(const Json& choices) {
  std::printf("%7s  %-60s %8s %9s %9s  %s\n", "budget", "chosen chain", "speedup", "train",
              "test p", "holds");
  for (const auto& c : choices) {
    std::string chain = "none";
    double speedup = 0;
    if (!c["chosen"].is_null()) {
      // A fused chain's stages read as the same chain's in separate launches: say which it is.
      const int rows = c["chosen"].value("fuse_rows", 0);
      const std::string fused = !c["chosen"].value("fused", false) ? ""
                                : rows ? "fused-rows:" + std::to_string(rows) + ": "
                                       : "fused: ";
      chain = fused;
      for (const auto& s : c["chosen"]["stages"])
        chain += (chain == fused ? "" : " > ") + s["variant"].get<std::string>() + "@" +
                 s["wg"].get<std::string>();
      speedup = c["chosen"].value("rank_speedup", c["chosen"]["speedup"].get<double>());
    }
    std::printf(
        "%6.2f%%  %-60s %7.2fx %8.3g%% %8.3g%%  %s\n", 100 * c["budget"].get<double>(),
        chain.c_str(), speedup,
        c["chosen"].is_null() ? 0.0 : 100 * c["chosen"]["train_error"].get<double>(),
        c.contains("test") ? 100 * c["test"].value("percentile_error", 0.0) : 0.0,
        c["holds"].is_null()
            ? (c["verdict"].get<std::string>().rfind("unmeasured", 0) == 0 ? "unmeasured" : "-")
        : c["holds"].get<bool>() ? "yes"
                                 : "NO");
  }
}

}  // namespace

int cmd_tune_pipeline(int argc, char** argv, const std::string& command_line) {
  std::vector<std::string> stage_values;
  std::vector<char*> rest = take_stage_values(argc, argv, stage_values);
  const cxxopts::ParseResult args =
      parse_command(pipeline_tune_options(), static_cast<int>(rest.size()), rest.data());
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  for (const char* required : {"pipeline", "budget", "train", "test"})
    if (!args.count(required))
      throw UsageError(std::string("kperf tune --pipeline needs --") + required);
  ChainTuneRequest treq;
  treq.budgets = parse_budgets(text("budget"));
  treq.percentile = parse_count("percentile", text("percentile"), 0, 100);
  treq.tie_tolerance = parse_fraction("tie-tolerance", text("tie-tolerance"));
  const std::string cache = text("cache");
  if (cache != "auto" && cache != "cold" && cache != "warm")
    throw UsageError("--cache " + cache + ": expected auto, cold or warm");
  if (cache == "warm" && args.count("cold"))
    throw UsageError("--cold and --cache warm contradict each other");
  const SelectOptions select = read_select_options(args);
  const ChainRequest req = read_chain_request(args, stage_values);
  const std::vector<const AppDescriptor*>& apps = req.apps;
  treq.size = req.size;
  std::vector<std::pair<int, int>> sizes;
  treq.train = read_input_dir("--train", text("train"), sizes);
  treq.test = read_input_dir("--test", text("test"), sizes);
  CoreOptions opt = req.opt;
  if (args.count("out")) require_writable(text("out"));

  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, opt.kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf-tune-pipeline", env.info().name);
  require_writable(out_path);
  // Warm timings of grids that fit a GPU's cache move with where the buffers landed (kperf tune
  // --cache); a CPU flushing 256 MiB per run pays more than its kernels take.
  opt.cold = opt.cold || cache == "cold" ||
             (cache == "auto" && env.info().is_gpu() && !env.info().is_cpu());
  PhaseLaps phases;
  const std::vector<Chain> chains = chains_of(apps, req.spaces, req.fuse, req.fuse_rows);
  Core core(env, opt);
  prebuild_chains(env, core, chains);
  phases.end("build");
  TruthSource truths(&env, opt.kernel_root, opt.params, opt.extra_build_options);
  ChainMeasurer measurer(core, truths, req.name, req.apps);
  ChainSearch search(measurer, chains, treq);
  search.screen();
  phases.end("screen");
  search.measure();
  phases.end("measure");
  search.rank();
  phases.end("rank");
  Json choices = search.choices();
  phases.end("held_out");
  // --select canary: the ladders on the held-out inputs, and the canaries' choices there.
  std::vector<ChainRow>& rows = search.rows();
  Json canary;
  if (select.canary) {
    const std::vector<Json> selects =
        select_chains(measurer, truths, search.ladder_input(), select, rows, canary);
    for (std::size_t b = 0; b < selects.size(); ++b) choices[b]["select"] = selects[b];
    phases.end("ladder");
  }
  Json ctx = base_context(command_line, env, opt.kernel_root);
  ctx["tune_pipeline"] = chain_search_context(req, treq, opt, cache, chains.size(), search, select);
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  ctx["harness"] = {{"wall_s", phases.wall_s()}, {"phases_s", phases.laps()}};
  // Shares of the phases above: decoding and resizing the inputs, and computing their truths.
  ctx["harness"]["inputs_s"] = search.load_seconds();
  ctx["harness"]["truth_s"] = measurer.truth_seconds();
  Json results = Json::array();
  for (const ChainRow& r : rows) results.push_back(to_json(r));
  Json doc = {
      {"schema_version", kSchemaVersion},
      {"kind", "pipeline-tune"},
      {"pipeline_schema_version", kPipelineTuneSchemaVersion},
      {"context", ctx},
      {"results", results},
      {"tune",
       {{"front", search.front()}, {"choices", choices}, {"measured", search.measured_json()}}}};
  if (select.canary) doc["tune"]["canary"] = canary;
  write_document_atomic(out_path, doc.dump(1) + "\n");
  print_chain_choices(choices);
  if (select.canary) {
    print_selections_header("pipeline");
    for (const auto& c : choices) print_selection(req.name, c, c["select"], canary["tracking"]);
  }
  std::fprintf(stderr, "done: %zu chains screened, %zu measured, written to %s\n", chains.size(),
               search.measured_count(), out_path.c_str());
  bool unmeasured = false;
  for (const auto& c : choices)
    unmeasured = unmeasured || c["verdict"].get<std::string>().rfind("unmeasured", 0) == 0;
  const auto broken = std::count_if(rows.begin(), rows.end(), [](const ChainRow& r) {
    return r.status == Status::kReferenceFailed;
  });
  if (broken) report_broken_truths(static_cast<std::size_t>(broken));
  return measurer.faulted() || unmeasured || broken ? kExitFaulted : 0;
}

}  // namespace kperf
