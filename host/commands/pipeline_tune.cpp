// kperf tune --pipeline: one end-to-end error budget over a chain's per-stage product space.
// Every chain is timed and judged on the first training input (the screen); those near the
// largest budget are measured on every training input; the front of time against training error
// is written, and per budget the fastest chain within it is checked on the held-out inputs,
// beside the best uniform chain and the best chain approximating its costliest stage alone.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "cli.hpp"
#include "command_support.hpp"
#include "metrics.hpp"
#include "pipeline_command.hpp"
#include "results.hpp"
#include "supervisor.hpp"
#include "tune.hpp"
#include "tune_command.hpp"

namespace kperf {

namespace {

cxxopts::Options pipeline_tune_options() {
  cxxopts::Options options("kperf tune --pipeline",
                           "One end-to-end error budget over a chain of apps, each stage at its "
                           "own approximation, checked on held-out inputs");
  // clang-format off
  options.add_options()
    ("budget", "end-to-end error budget(s): fractions in (0, 1] of the last stage's primary metric", cxxopts::value<std::string>())
    ("train", "directory of training images", cxxopts::value<std::string>())
    ("test", "directory of held-out images", cxxopts::value<std::string>())
    ("percentile", "the statistic over inputs held to the budget", cxxopts::value<std::string>()->default_value("95"))
    ("out", "JSON path (default: kperf-tune-pipeline-<device>-<time>.json)", cxxopts::value<std::string>());
  // clang-format on
  add_chain_options(options, "30");
  return options;
}

struct Candidate {
  std::size_t chain = 0;
  double time = 0, error = 0;  // screen median; percentile final error over training inputs
  std::vector<double> train_errors;
  nlohmann::ordered_json screen_row;
};

// Whether every stage but `stage` is exact; `stage` may be anything.
bool alone_at(const std::vector<PipelineStage>& chain, std::size_t stage) {
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (k != stage && !exact_stage(chain[k])) return false;
  return true;
}

// The same approximation at every stage: one variant, and no stage exact unless all are.
bool uniform(const std::vector<PipelineStage>& chain) {
  for (const auto& s : chain)
    if (s.variant.id() != chain[0].variant.id()) return false;
  return true;
}

// The chains' final errors on `inputs` (errors only: no timed runs).
std::vector<double> final_errors(PipelineRunner& runner, const std::vector<PipelineStage>& chain,
                                 const std::vector<std::pair<Grid, std::vector<GridD>>>& inputs,
                                 std::string& problem) {
  std::vector<double> errors;
  for (const auto& [grid, truth] : inputs) {
    const ChainOutcome out = runner.run(chain, grid);
    if (!out.ok()) {
      problem = out.status + ": " + out.reason;
      return {};
    }
    const AppDescriptor& last = *chain.back().app;
    const ErrorMetrics e =
        compute_errors(truth.back().data, out.stages.back().output, grid.width, grid.height, false);
    // Elements the metrics skip because the output is not finite where the truth is: outputs
    // never written, or computed from values never loaded. Not a measurement.
    std::int64_t truth_nonfinite = 0;
    for (double t : truth.back().data) truth_nonfinite += !std::isfinite(t);
    if (e.nonfinite > truth_nonfinite) {
      problem = "run_failed: " + std::to_string(e.nonfinite - truth_nonfinite) +
                " output elements of the last stage are not finite";
      return {};
    }
    errors.push_back(e.value(last.primary_metric));
  }
  return errors;
}

nlohmann::ordered_json candidate_json(const Candidate& c, double base_time) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& s : c.screen_row["stages"])
    stages.push_back({{"app", s["app"]}, {"variant", s["variant"]}, {"wg", s["wg"]}});
  return {{"key", c.screen_row["key"]},
          {"stages", stages},
          {"time_ns", c.time},
          {"speedup", base_time / c.time},
          {"train_error", c.error},
          {"train_errors", c.train_errors},
          {"intermediate", c.screen_row["intermediate"]}};
}

// The fastest of `pool` within `budget` whose chain passes `admit`.
const Candidate* fastest_within(const std::vector<Candidate>& pool, double budget,
                                const std::function<bool(const Candidate&)>& admit) {
  const Candidate* best = nullptr;
  for (const auto& c : pool)
    if (c.error <= budget && admit(c) && (!best || c.time < best->time)) best = &c;
  return best;
}

}  // namespace

namespace {

using InputsWithTruth = std::vector<std::pair<Grid, std::vector<GridD>>>;

// Wall seconds of the tuner's phases since the last one ended: the document's harness block.
class Phases {
 public:
  void end(const char* name) {
    const double t = now();
    phases_[name] = t - last_;
    last_ = t;
  }
  nlohmann::ordered_json json() const {
    return {{"wall_s", now() - start_}, {"phases_s", phases_}};
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double start_ = now(), last_ = start_;
  nlohmann::ordered_json phases_ = nlohmann::ordered_json::object();
};

// The stage of the accurate chain's row that took the longest.
std::size_t costliest_stage(const nlohmann::ordered_json& base_row, std::size_t stages) {
  std::size_t costliest = 0;
  if (!base_row.is_null())
    for (std::size_t k = 1; k < stages; ++k)
      if (base_row["stages"][k]["time_ns"]["median"].get<double>() >
          base_row["stages"][costliest]["time_ns"]["median"].get<double>())
        costliest = k;
  return costliest;
}

// Each input at `size` with its chained truth.
InputsWithTruth with_truth(const std::vector<const AppDescriptor*>& apps,
                           const std::vector<ImageSource>& sources, std::pair<int, int> size) {
  InputsWithTruth inputs;
  for (const auto& src : sources) {
    Grid g = load_image_source(src, size);
    std::vector<GridD> truth = chain_truth(apps, g);
    inputs.emplace_back(std::move(g), std::move(truth));
  }
  return inputs;
}

// Per budget: the fastest chain within it on the training inputs, checked on the held-out ones,
// beside the best uniform chain and the best chain approximating the costliest stage alone.
nlohmann::ordered_json choices_json(PipelineRunner& errors_only,
                                    const std::vector<std::vector<PipelineStage>>& chains,
                                    const std::vector<Candidate>& measured,
                                    const std::vector<double>& budgets, double percentile_p,
                                    const InputsWithTruth& test, double base_time,
                                    std::size_t costliest) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (double budget : budgets) {
    nlohmann::ordered_json cj = {{"budget", budget}};
    const Candidate* chosen =
        fastest_within(measured, budget, [](const Candidate&) { return true; });
    const Candidate* flat = fastest_within(
        measured, budget, [&](const Candidate& c) { return uniform(chains[c.chain]); });
    const Candidate* alone = fastest_within(
        measured, budget, [&](const Candidate& c) { return alone_at(chains[c.chain], costliest); });
    cj["chosen"] = chosen ? candidate_json(*chosen, base_time) : nlohmann::ordered_json(nullptr);
    cj["best_uniform"] = flat ? candidate_json(*flat, base_time) : nlohmann::ordered_json(nullptr);
    cj["best_costliest_stage_alone"] =
        alone ? candidate_json(*alone, base_time) : nlohmann::ordered_json(nullptr);
    if (!chosen) {
      cj["holds"] = nullptr;
      cj["verdict"] = "no chain is within the budget on the training inputs";
      list.push_back(cj);
      continue;
    }
    std::string problem;
    const std::vector<double> errors =
        final_errors(errors_only, chains[chosen->chain], test, problem);
    if (!problem.empty()) {
      cj["holds"] = nullptr;
      cj["verdict"] = "unmeasured: on a held-out input the chain gave " + problem;
    } else {
      const double held = percentile(errors, percentile_p);
      cj["test"] = {{"errors", errors},
                    {"percentile_error", held},
                    {"max", *std::max_element(errors.begin(), errors.end())}};
      cj["holds"] = held <= budget;
      cj["verdict"] = held <= budget ? "holds: the held-out percentile error is within the budget"
                                     : "DOES NOT HOLD: the held-out percentile error is above it";
    }
    list.push_back(cj);
  }
  return list;
}

// The measured chains that no other beats on both time and training error.
nlohmann::ordered_json front_json(const std::vector<Candidate>& measured, double base_time) {
  nlohmann::ordered_json front = nlohmann::ordered_json::array();
  for (const auto& c : measured) {
    bool dominated = false;
    for (const auto& d : measured)
      dominated = dominated || (d.time <= c.time && d.error <= c.error &&
                                (d.time < c.time || d.error < c.error));
    if (!dominated) front.push_back(candidate_json(c, base_time));
  }
  std::sort(front.begin(), front.end(), [](const auto& a, const auto& b) {
    return a["time_ns"].template get<double>() < b["time_ns"].template get<double>();
  });
  return front;
}

struct Search {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();  // the screen's
  std::vector<Candidate> measured;
  double base_time = NAN;  // the fastest accurate chain's, in the screen
  nlohmann::ordered_json base_row;
};

// Screen: every chain timed, and judged, on the first training input. Measure: the chains within
// twice the largest budget there (and the accurate ones) on every training input.
Search search_chains(PipelineRunner& timed, PipelineRunner& errors_only,
                     const std::string& pipeline,
                     const std::vector<std::vector<PipelineStage>>& chains,
                     const InputsWithTruth& train, const std::string& first_name,
                     double largest_budget, double percentile_p) {
  Search found;
  std::vector<Candidate> screened;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    nlohmann::ordered_json row = chain_row(
        pipeline, chains[i], timed.run(chains[i], train[0].first), first_name, train[0].second);
    row["stage"] = "screen";
    if (row["status"] == "ok") {
      const double t = row["time_ns"]["median"];
      screened.push_back({i, t, row["final_error"].get<double>(), {}, row});
      if (alone_at(chains[i], chains[i].size()) && !(t >= found.base_time))
        found.base_time = t, found.base_row = row;
    }
    found.rows.push_back(std::move(row));
  }
  for (Candidate& c : screened) {
    if (c.error > 2 * largest_budget && !alone_at(chains[c.chain], chains[c.chain].size()))
      continue;
    std::string problem;
    c.train_errors = final_errors(errors_only, chains[c.chain], train, problem);
    if (!problem.empty()) continue;
    c.error = percentile(c.train_errors, percentile_p);
    found.measured.push_back(c);
  }
  return found;
}

// The context's stages, inputs and method.
void describe_search(nlohmann::ordered_json& block, const std::vector<const AppDescriptor*>& apps,
                     const std::vector<ImageSource>& train, const std::vector<ImageSource>& test) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array(), train_names = names,
                         test_names = names;
  for (const auto* app : apps) names.push_back(app->name);
  for (const auto& s : train) train_names.push_back(s.name);
  for (const auto& s : test) test_names.push_back(s.name);
  block["stages"] = names;
  block["train"] = train_names;
  block["test"] = test_names;
  block["method"] =
      "screen: every chain of the stages' product timed and judged on the first training input. "
      "measure: the chains within twice the largest budget there (and the accurate chains), "
      "their final error on every training input, at the percentile. front: the measured chains "
      "no other beats on both screen time and training error. per budget: the fastest measured "
      "chain within it, checked on every held-out input; beside it the fastest uniform chain "
      "(one variant at every stage) and the fastest chain approximating only the costliest "
      "stage of the accurate chain. speedups against the fastest accurate f32 chain in the "
      "screen";
}

void print_choices(const nlohmann::ordered_json& choices) {
  std::printf("%7s  %-60s %8s %9s %9s  %s\n", "budget", "chosen chain", "speedup", "train",
              "test p", "holds");
  for (const auto& c : choices) {
    std::string chain = "none";
    if (!c["chosen"].is_null()) {
      chain.clear();
      for (const auto& s : c["chosen"]["stages"])
        chain += (chain.empty() ? "" : " > ") + s["variant"].get<std::string>() + "@" +
                 s["wg"].get<std::string>();
    }
    std::printf("%6.2f%%  %-60s %7.2fx %8.3g%% %8.3g%%  %s\n", 100 * c["budget"].get<double>(),
                chain.c_str(), c["chosen"].is_null() ? 0.0 : c["chosen"]["speedup"].get<double>(),
                c["chosen"].is_null() ? 0.0 : 100 * c["chosen"]["train_error"].get<double>(),
                c.contains("test") ? 100 * c["test"]["percentile_error"].get<double>() : 0.0,
                c["holds"].is_null()     ? "-"
                : c["holds"].get<bool>() ? "yes"
                                         : "NO");
  }
}

}  // namespace

int cmd_tune_pipeline(int argc, char** argv, const std::string& command_line) {
  std::vector<std::string> stage_values;
  std::vector<char*> rest = take_stage_values(argc, argv, stage_values);
  cxxopts::Options options = pipeline_tune_options();
  const std::optional<cxxopts::ParseResult> parsed =
      parse_command(options, static_cast<int>(rest.size()), rest.data());
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  for (const char* required : {"pipeline", "budget", "train", "test"})
    if (!args.count(required))
      throw UsageError(std::string("kperf tune --pipeline needs --") + required);
  const std::vector<double> budgets = parse_budgets(text("budget"));
  const double percentile_p = parse_count("percentile", text("percentile"), 0, 100);
  const ChainRequest req = read_chain_request(args, stage_values);
  const std::string& pipeline = req.name;
  const std::string& kernel_root = req.opt.kernel_root;
  const std::vector<const AppDescriptor*>& apps = req.apps;
  const std::pair<int, int> size = req.size;
  std::vector<std::pair<int, int>> sizes;
  const std::vector<ImageSource> train_src = read_input_dir("--train", text("train"), sizes);
  const std::vector<ImageSource> test_src = read_input_dir("--test", text("test"), sizes);
  const PipelineOptions& opt = req.opt;
  if (args.count("out")) require_writable(text("out"));

  ClEnv env(choose_device_entry(text("device")));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, kernel_root);
  const std::string out_path = out_path_or_default(args, "kperf-tune-pipeline", env.info().name);
  require_writable(out_path);
  Phases phases;
  const InputsWithTruth train = with_truth(apps, train_src, size),
                        test = with_truth(apps, test_src, size);
  phases.end("inputs_and_truth");
  const auto chains = chains_of(apps, req.spaces);
  PipelineRunner timed(env, opt);
  PipelineOptions eopt = opt;
  eopt.warmup = 0;
  eopt.reps = 0;
  eopt.read_every_stage = false;
  PipelineRunner errors_only(env, eopt);

  const Search found = search_chains(timed, errors_only, pipeline, chains, train, train_src[0].name,
                                     budgets.back(), percentile_p);
  const std::vector<Candidate>& measured = found.measured;
  const double base_time = found.base_time;
  const nlohmann::ordered_json& base_row = found.base_row;
  const nlohmann::ordered_json& rows = found.rows;
  phases.end("screen_and_measure");
  const std::size_t costliest = costliest_stage(base_row, apps.size());
  const nlohmann::ordered_json choices = choices_json(errors_only, chains, measured, budgets,
                                                      percentile_p, test, base_time, costliest);
  phases.end("held_out");
  nlohmann::ordered_json ctx = base_context(command_line, env);
  ctx["tune_pipeline"] = {{"name", pipeline},
                          {"budgets", budgets},
                          {"percentile", percentile_p},
                          {"size", {size.first, size.second}},
                          {"warmup", opt.warmup},
                          {"reps", opt.reps},
                          {"cold", opt.cold},
                          {"chains", chains.size()},
                          {"measured", measured.size()},
                          {"costliest_stage", apps[costliest]->name}};
  describe_search(ctx["tune_pipeline"], apps, train_src, test_src);
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  ctx["harness"] = phases.json();
  nlohmann::ordered_json doc = {
      {"schema_version", kSchemaVersion},
      {"kind", "pipeline-tune"},
      {"pipeline_schema_version", 1},
      {"context", ctx},
      {"results", rows},
      {"tune", {{"front", front_json(measured, base_time)}, {"choices", choices}}}};
  doc["tune"]["measured"] = nlohmann::ordered_json::array();
  for (const auto& c : measured) doc["tune"]["measured"].push_back(candidate_json(c, base_time));
  write_file_atomic(out_path, doc.dump(1) + "\n");
  print_choices(choices);
  std::fprintf(stderr, "done: %zu chains screened, %zu measured, written to %s\n", chains.size(),
               measured.size(), out_path.c_str());
  return timed.device_lost() || errors_only.device_lost() ? kExitFaulted : 0;
}

}  // namespace kperf
