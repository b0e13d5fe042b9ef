// kperf tune --pipeline: one end-to-end error budget over a chain's per-stage product space. Every
// chain is timed and judged on the first training input (the screen); those near the largest budget
// are measured on every training input; the front of time against training error is written; each
// budget's finalists are timed again in interleaved rounds (the rank stage) and the stable rule
// chooses, checked on the held-out inputs, beside the best uniform chain and the best chain
// approximating its costliest stage alone.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cli.hpp"
#include "command_support.hpp"
#include "metrics.hpp"
#include "pipeline_command.hpp"
#include "pipeline_select.hpp"
#include "results.hpp"
#include "supervisor.hpp"
#include "tune.hpp"
#include "tune_command.hpp"

namespace kperf {

namespace {

using Mode = PipelineRunner::Mode;
using Json = nlohmann::ordered_json;

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
    ("cache", "the device cache in the timed runs: cold (flushed before every run, as --cold), warm (back-to-back runs) or auto (cold on a GPU, warm on a CPU), as kperf tune's", cxxopts::value<std::string>()->default_value("auto"))
    ("tie-tolerance", "the stable rule: of the finalists within this fraction of the fastest, the lowest training error", cxxopts::value<std::string>()->default_value("0.03"))
    ("out", "JSON path (default: kperf-tune-pipeline-<device>-<time>.json)", cxxopts::value<std::string>());
  // clang-format on
  add_select_options(options, "chain");
  add_chain_options(options, "30");
  return options;
}

struct Candidate {
  std::size_t chain = 0;
  double time = 0,
         error = 0;  // screen median; percentile final error over training inputs
  std::vector<double> train_errors;
  Json screen_row;
  std::optional<double> rank_time;  // the median of its rank samples, where it was a finalist
};

// Whether every stage but `stage` is exact; `stage` may be anything.
bool alone_at(const std::vector<PipelineStage>& chain, std::size_t stage) {
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (k != stage && !is_exact(chain[k].variant)) return false;
  return true;
}

// The same approximation at every stage: every axis alike but the precision, and every stage
// reading its input in the same stored type. Half storage throughout is f16 stages then an f16in
// one (each reads half; the last writes the final output in float).
bool uniform(const std::vector<PipelineStage>& chain) {
  auto approximation = [](const Variant& v) {
    Variant stored_f32 = v;
    stored_f32.precision = nullptr;
    return stored_f32.id() + " reading " + v.precision_info().in->name;
  };
  for (const auto& s : chain)
    if (approximation(s.variant) != approximation(chain[0].variant)) return false;
  return true;
}

// Wall seconds of the tuner's phases since the last one ended: the document's harness block.
class Phases {
 public:
  void end(const char* name) {
    const double t = now();
    phases_[name] = t - last_;
    last_ = t;
  }
  Json json() const { return {{"wall_s", now() - start_}, {"phases_s", phases_}}; }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double start_ = now(), last_ = start_;
  Json phases_ = Json::object();
};

struct TuneRequest {
  std::vector<double> budgets;  // ascending
  double percentile = 95, tie_tolerance = 0.03;
  std::vector<ImageSource> train, test;
  std::pair<int, int> size;
  int reps = 30;
};

// The search's state: every chain's rows, the candidates the screen passed and the measured ones.
class ChainSearch {
 public:
  ChainSearch(ChainMeasurer& m, const std::vector<std::vector<PipelineStage>>& chains,
              const TuneRequest& req)
      : m_(m), chains_(chains), req_(req) {}
  void screen();
  void measure();
  void rank();
  Json choices();
  Json front() const;
  Json measured_json() const;
  const Json& rows() const { return rows_; }
  double load_seconds() const { return load_s_; }
  std::size_t measured_count() const { return measured_.size(); }
  std::size_t costliest_stage() const;
  // After choices(): what --select canary's ladders are made of.
  ChainLadderInput ladder_input() const;

 private:
  const Candidate* fastest_within(double budget,
                                  const std::function<bool(const Candidate&)>& admit) const;
  std::vector<const Candidate*> finalists(double budget) const;
  Json candidate_json(const Candidate& c) const;
  Json verdict(const Candidate& chosen, double budget, const std::map<std::size_t, Json>& test);

  ChainMeasurer& m_;
  const std::vector<std::vector<PipelineStage>>& chains_;
  const TuneRequest& req_;
  Json rows_ = Json::array();
  std::vector<Candidate> screened_, measured_;
  std::optional<std::size_t> base_;  // the fastest exact chain of the screen (into screened_)
  std::optional<double> base_rank_time_;
  std::map<double, const Candidate*> chosen_;  // per budget, by choices()
  double load_s_ = 0;
  Grid load(const ImageSource& src);
};

Grid ChainSearch::load(const ImageSource& src) {
  const auto start = std::chrono::steady_clock::now();
  Grid g = load_image_source(src, req_.size);
  load_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return g;
}

// Every chain timed, and judged, on the first training input.
void ChainSearch::screen() {
  m_.bind(req_.train[0].name, load(req_.train[0]));
  for (std::size_t i = 0; i < chains_.size(); ++i) {
    Json row = m_.measure(chains_[i], {{"stage", "screen"}});
    if (row["status"] == "ok") {
      screened_.push_back({i,
                           row["time_ns"]["median"].get<double>(),
                           row["final_error"].get<double>(),
                           {row["final_error"].get<double>()},
                           row,
                           std::nullopt});
      // The baseline: the fastest exact chain of separate launches (of fused ones where none is).
      const auto fused_rank = [&](std::size_t c) { return is_fused(chains_[screened_[c].chain]); };
      const std::size_t here = screened_.size() - 1;
      if (exact_chain(chains_[i]) &&
          (!base_ || std::make_pair(fused_rank(here), screened_[here].time) <
                         std::make_pair(fused_rank(*base_), screened_[*base_].time)))
        base_ = here;
    }
    rows_.push_back(std::move(row));
  }
}

// The chains within twice the largest budget on the first input (and the exact ones), their final
// error on every other training input, one input at a time: an input and its truth go to the device
// once. A chain that fails on an input leaves the search.
void ChainSearch::measure() {
  std::vector<Candidate*> alive;
  for (Candidate& c : screened_)
    if (c.error <= 2 * req_.budgets.back() || exact_chain(chains_[c.chain])) alive.push_back(&c);
  for (std::size_t i = 1; i < req_.train.size(); ++i) {
    m_.bind(req_.train[i].name, load(req_.train[i]));
    std::vector<Candidate*> still;
    for (Candidate* c : alive) {
      Json row = m_.measure(chains_[c->chain], {{"stage", "measure"}}, Mode::kFinalError);
      if (row["status"] == "ok") {
        c->train_errors.push_back(row["final_error"].get<double>());
        still.push_back(c);
      }
      rows_.push_back(std::move(row));
    }
    alive = std::move(still);
  }
  for (Candidate* c : alive) {
    c->error = percentile(c->train_errors, req_.percentile);
    measured_.push_back(*c);
  }
}

const Candidate* ChainSearch::fastest_within(
    double budget, const std::function<bool(const Candidate&)>& admit) const {
  const Candidate* best = nullptr;
  for (const auto& c : measured_)
    if (c.error <= budget && admit(c) && (!best || c.time < best->time)) best = &c;
  return best;
}

// A budget's finalists: the measured chains within it whose screen time lies within
// TuneConfig::kFinalistBand of the fastest, at most kMaxFinalists of them, fastest first.
std::vector<const Candidate*> ChainSearch::finalists(double budget) const {
  std::vector<const Candidate*> within;
  for (const auto& c : measured_)
    if (c.error <= budget) within.push_back(&c);
  std::sort(within.begin(), within.end(),
            [](const Candidate* a, const Candidate* b) { return a->time < b->time; });
  std::vector<const Candidate*> out;
  for (const Candidate* c : within)
    if (c->time <= within.front()->time * (1 + TuneConfig::kFinalistBand) &&
        out.size() < TuneConfig::kMaxFinalists)
      out.push_back(c);
  return out;
}

std::size_t ChainSearch::costliest_stage() const {
  std::size_t costliest = 0;
  // A fused baseline's one launch has no stage times (only where no unfused chain is screened).
  if (!base_ || is_fused(chains_[screened_[*base_].chain])) return costliest;
  const Json& stages = screened_[*base_].screen_row["stages"];
  for (std::size_t k = 1; k < stages.size(); ++k)
    if (stages[k]["time_ns"]["median"].get<double>() >
        stages[costliest]["time_ns"]["median"].get<double>())
      costliest = k;
  return costliest;
}

// Every budget's finalists, its best uniform and costliest-stage-alone chains and the accurate
// chain, timed again on the first training input in TuneConfig::kRankRounds interleaved rounds, so
// that drift over the search touches all alike.
void ChainSearch::rank() {
  std::set<std::size_t> chains;  // indices into chains_
  const std::size_t costliest = costliest_stage();
  for (double budget : req_.budgets) {
    for (const Candidate* c : finalists(budget)) chains.insert(c->chain);
    for (const Candidate* c :
         {fastest_within(budget, [&](const Candidate& c) { return uniform(chains_[c.chain]); }),
          fastest_within(
              budget, [&](const Candidate& c) { return alone_at(chains_[c.chain], costliest); })})
      if (c) chains.insert(c->chain);
  }
  if (base_) chains.insert(screened_[*base_].chain);
  if (chains.empty()) return;
  m_.bind(req_.train[0].name, load(req_.train[0]), false);
  std::map<std::size_t, std::vector<double>> samples;
  for (int round = 0; round < TuneConfig::kRankRounds; ++round)
    for (std::size_t chain : chains) {
      Json row = m_.measure(chains_[chain], {{"stage", "rank"}, {"round", round}}, Mode::kTimeOnly);
      if (row["status"] == "ok")
        for (const auto& t : row["samples_ns"]) samples[chain].push_back(t.get<double>());
      rows_.push_back(std::move(row));
    }
  for (auto& c : measured_)
    if (samples.count(c.chain)) c.rank_time = percentile(samples[c.chain], 50);
  if (base_ && samples.count(screened_[*base_].chain))
    base_rank_time_ = percentile(samples[screened_[*base_].chain], 50);
}

Json ChainSearch::candidate_json(const Candidate& c) const {
  Json stages = Json::array();
  for (const auto& s : c.screen_row["stages"])
    stages.push_back({{"app", s["app"]}, {"variant", s["variant"]}, {"wg", s["wg"]}});
  const double base_time = base_ ? screened_[*base_].time : NAN;
  Json j = {{"key", c.screen_row["key"]},
            {"fused", c.screen_row["fused"]},
            {"stages", stages},
            {"time_ns", c.time},
            {"speedup", base_time / c.time},
            {"train_error", c.error},
            {"train_errors", c.train_errors},
            {"intermediate", c.screen_row["intermediate"]}};
  if (c.rank_time) {
    j["rank_time_ns"] = *c.rank_time;
    if (base_rank_time_) j["rank_speedup"] = *base_rank_time_ / *c.rank_time;
  }
  return j;
}

Json ChainSearch::verdict(const Candidate& chosen, double budget,
                          const std::map<std::size_t, Json>& test) {
  const Json& t = test.at(chosen.chain);
  if (t.contains("problem"))
    return {{"holds", nullptr},
            {"verdict",
             "unmeasured: on a held-out input the chain gave " + t["problem"].get<std::string>()}};
  const std::vector<double> errors = t["errors"];
  const double held = percentile(errors, req_.percentile);
  return {{"test",
           {{"errors", errors},
            {"percentile_error", held},
            {"max", *std::max_element(errors.begin(), errors.end())}}},
          {"holds", held <= budget},
          {"verdict", held <= budget ? "holds: the held-out percentile error is within the budget"
                                     : "DOES NOT HOLD: the held-out percentile error is above it"}};
}

// Per budget: the stable rule over its ranked finalists (of those within the tie tolerance of the
// fastest, the lowest training error), checked on every held-out input, one input at a time.
Json ChainSearch::choices() {
  std::map<double, const Candidate*>& chosen = chosen_;
  for (double budget : req_.budgets) {
    std::vector<const Candidate*> finals = finalists(budget);
    std::vector<RankedCandidate> ranked;
    for (const Candidate* c : finals) ranked.push_back({c->rank_time.value_or(c->time), c->error});
    const auto pick = stable_choice(ranked, req_.tie_tolerance);
    chosen[budget] = pick ? finals[*pick] : nullptr;
  }
  std::map<std::size_t, Json> test;  // per chosen chain: its held-out errors, or a problem
  for (const auto& [budget, c] : chosen)
    if (c) test[c->chain] = {{"errors", Json::array()}};
  for (const ImageSource& src : req_.test) {
    if (test.empty()) break;
    m_.bind(src.name, load(src));
    for (auto& [chain, t] : test) {
      if (t.contains("problem")) continue;
      Json row = m_.measure(chains_[chain], {{"stage", "test"}}, Mode::kFinalError);
      if (row["status"] == "ok")
        t["errors"].push_back(row["final_error"]);
      else
        t["problem"] = row["status"].get<std::string>() + ": " + row["reason"].get<std::string>();
      rows_.push_back(std::move(row));
    }
  }
  const std::size_t costliest = costliest_stage();
  // A training input whose truth is broken (SPEC 15) leaves no chain to choose, and no verdict.
  const Json* broken = nullptr;
  for (const Json& row : rows_)
    if (row["stage"] != "test" && row["status"] == "reference_failed") {
      broken = &row;
      break;
    }
  Json list = Json::array();
  for (double budget : req_.budgets) {
    const Candidate* c = broken ? nullptr : chosen[budget];
    const Candidate* flat =
        fastest_within(budget, [&](const Candidate& x) { return uniform(chains_[x.chain]); });
    const Candidate* alone = fastest_within(
        budget, [&](const Candidate& x) { return alone_at(chains_[x.chain], costliest); });
    Json cj = {{"budget", budget}};
    cj["chosen"] = c ? candidate_json(*c) : Json(nullptr);
    Json finals = Json::array();
    for (const Candidate* f : finalists(budget)) finals.push_back(candidate_json(*f));
    cj["finalists"] = finals;
    cj["best_uniform"] = flat ? candidate_json(*flat) : Json(nullptr);
    cj["best_costliest_stage_alone"] = alone ? candidate_json(*alone) : Json(nullptr);
    if (broken) {
      cj["holds"] = nullptr;
      cj["verdict"] = "unmeasured: reference_failed on " +
                      (*broken)["input"]["name"].get<std::string>() + ": " +
                      (*broken)["reason"].get<std::string>();
    } else if (!c) {
      cj["holds"] = nullptr;
      cj["verdict"] = "no chain is within the budget on the training inputs";
    } else {
      cj.update(verdict(*c, budget, test));
    }
    list.push_back(cj);
  }
  return list;
}

ChainLadderInput ChainSearch::ladder_input() const {
  ChainLadderInput in;
  in.chains = &chains_;
  for (const Candidate& c : measured_) {
    in.measured.push_back(c.chain);
    in.points.push_back({c.time, c.error});
  }
  for (double budget : req_.budgets) {
    const auto it = chosen_.find(budget);
    std::optional<std::size_t> index;
    if (it != chosen_.end() && it->second)
      index = static_cast<std::size_t>(it->second - measured_.data());
    in.chosen.push_back(index);
  }
  if (base_) in.accurate = screened_[*base_].chain;
  in.budgets = req_.budgets;
  in.percentile = req_.percentile;
  in.test = req_.test;
  in.size = req_.size;
  return in;
}

// The measured chains that no other beats on both screen time and training error.
Json ChainSearch::front() const {
  Json front = Json::array();
  for (const auto& c : measured_) {
    bool dominated = false;
    for (const auto& d : measured_)
      dominated = dominated || (d.time <= c.time && d.error <= c.error &&
                                (d.time < c.time || d.error < c.error));
    if (!dominated) front.push_back(candidate_json(c));
  }
  std::sort(front.begin(), front.end(), [](const auto& a, const auto& b) {
    return a["time_ns"].template get<double>() < b["time_ns"].template get<double>();
  });
  return front;
}

Json ChainSearch::measured_json() const {
  Json list = Json::array();
  for (const auto& c : measured_) list.push_back(candidate_json(c));
  return list;
}

// The context's stages, inputs and method.
void describe_search(Json& block, const std::vector<const AppDescriptor*>& apps,
                     const TuneRequest& req) {
  Json names = Json::array(), train_names = names, test_names = names;
  for (const auto* app : apps) names.push_back(app->name);
  for (const auto& s : req.train) train_names.push_back(s.name);
  for (const auto& s : req.test) test_names.push_back(s.name);
  block["stages"] = names;
  block["train"] = train_names;
  block["test"] = test_names;
  block["method"] =
      "screen: every chain of the stages' product timed and judged on the first training input. "
      "measure: the chains within twice the largest budget there (and the accurate chains), their "
      "final error on every training input, at the percentile. front: the measured chains no other "
      "beats on both screen time and training error. rank: per budget the measured chains within "
      "it whose screen time is within 10 % of the fastest (at most 4), its best uniform and "
      "costliest-stage-alone chains and the accurate chain, timed again on the first training "
      "input in 6 interleaved rounds; the choice is the lowest training error of the finalists "
      "within the tie tolerance of the fastest rank time, checked on every held-out input. "
      "uniform: one approximation at every stage, each reading its input in one stored type; "
      "costliest stage alone: only the costliest stage of the accurate chain approximated. "
      "fused chains (--fuse all) are candidates like the others. "
      "speedup: against the fastest accurate f32 chain of separate launches in the screen (of "
      "fused ones where none is); "
      "rank_speedup: against its rank time";
}

void print_choices(const Json& choices) {
  std::printf("%7s  %-60s %8s %9s %9s  %s\n", "budget", "chosen chain", "speedup", "train",
              "test p", "holds");
  for (const auto& c : choices) {
    std::string chain = "none";
    double speedup = 0;
    if (!c["chosen"].is_null()) {
      chain.clear();
      for (const auto& s : c["chosen"]["stages"])
        chain += (chain.empty() ? "" : " > ") + s["variant"].get<std::string>() + "@" +
                 s["wg"].get<std::string>();
      speedup = c["chosen"].value("rank_speedup", c["chosen"]["speedup"].get<double>());
    }
    std::printf(
        "%6.2f%%  %-60s %7.2fx %8.3g%% %8.3g%%  %s\n", 100 * c["budget"].get<double>(),
        chain.c_str(), speedup,
        c["chosen"].is_null() ? 0.0 : 100 * c["chosen"]["train_error"].get<double>(),
        c.contains("test") ? 100 * c["test"]["percentile_error"].get<double>() : 0.0,
        c["holds"].is_null()
            ? (c["verdict"].get<std::string>().rfind("unmeasured", 0) == 0 ? "unmeasured" : "-")
        : c["holds"].get<bool>() ? "yes"
                                 : "NO");
  }
}

// The context's tune_pipeline block: what was searched, how, and how it went.
Json search_context(const ChainRequest& req, const TuneRequest& treq, const PipelineOptions& opt,
                    const std::string& cache, std::size_t chains, const ChainSearch& search,
                    const SelectOptions& select) {
  Json block = {{"name", req.name},
                {"budgets", treq.budgets},
                {"percentile", treq.percentile},
                {"tie_tolerance", treq.tie_tolerance},
                {"size", {treq.size.first, treq.size.second}},
                {"warmup", opt.warmup},
                {"reps", opt.reps},
                {"cache", cache},
                {"cold", opt.cold},
                {"fuse", fuse_json(req.fuse)},
                {"chains", chains},
                {"measured", search.measured_count()},
                {"costliest_stage", req.apps[search.costliest_stage()]->name}};
  describe_search(block, req.apps, treq);
  if (select.canary) block["select"] = select_context(select, TuneConfig::kLadderReach, "chains");
  return block;
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
  TuneRequest treq;
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
  treq.reps = req.opt.reps;
  std::vector<std::pair<int, int>> sizes;
  treq.train = read_input_dir("--train", text("train"), sizes);
  treq.test = read_input_dir("--test", text("test"), sizes);
  PipelineOptions opt = req.opt;
  opt.read_outputs = false;
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
  Phases phases;
  const auto chains = chains_of(apps, req.spaces, req.fuse);
  PipelineRunner runner(env, opt);
  runner.prebuild(chains);
  phases.end("build");
  ChainTruth truth(&env, apps, opt.kernel_root, opt.params, opt.extra_build_options);
  ChainMeasurer measurer(runner, truth, req.name);
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
  Json results = search.rows(), canary;
  if (select.canary) {
    const std::vector<Json> selects =
        select_chains(measurer, truth, search.ladder_input(), select, results, canary);
    for (std::size_t b = 0; b < selects.size(); ++b) choices[b]["select"] = selects[b];
    phases.end("ladder");
  }
  Json ctx = base_context(command_line, env, opt.kernel_root);
  ctx["tune_pipeline"] = search_context(req, treq, opt, cache, chains.size(), search, select);
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  ctx["harness"] = phases.json();
  // Shares of the phases above: decoding and resizing the inputs, and computing their truths.
  ctx["harness"]["inputs_s"] = search.load_seconds();
  ctx["harness"]["truth_s"] = measurer.truth_seconds();
  Json doc = {
      {"schema_version", kSchemaVersion},
      {"kind", "pipeline-tune"},
      {"pipeline_schema_version", 2},
      {"context", ctx},
      {"results", results},
      {"tune",
       {{"front", search.front()}, {"choices", choices}, {"measured", search.measured_json()}}}};
  if (select.canary) doc["tune"]["canary"] = canary;
  write_file_atomic(out_path, doc.dump(1) + "\n");
  print_choices(choices);
  if (select.canary) {
    print_selections_header("pipeline");
    for (const auto& c : choices) print_selection(req.name, c, c["select"], canary["tracking"]);
  }
  std::fprintf(stderr, "done: %zu chains screened, %zu measured, written to %s\n", chains.size(),
               search.measured_count(), out_path.c_str());
  bool unmeasured = false;
  for (const auto& c : choices)
    unmeasured = unmeasured || c["verdict"].get<std::string>().rfind("unmeasured", 0) == 0;
  const Json& rows = doc["results"];
  const auto broken = std::count_if(
      rows.begin(), rows.end(), [](const Json& r) { return r["status"] == "reference_failed"; });
  if (broken) report_broken_truths(static_cast<std::size_t>(broken));
  return measurer.faulted() || unmeasured || broken ? kExitFaulted : 0;
}

}  // namespace kperf
