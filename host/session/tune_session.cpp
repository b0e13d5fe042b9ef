// The tuners' sessions (tune_session.hpp): what their documents' contexts say of the search, the
// fingerprint a resumed tune is held to, and the rows it resumes.
#include "tune_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "fault_journal.hpp"
#include "kernel_axes.hpp"

namespace kperf {

using Json = nlohmann::ordered_json;

nlohmann::ordered_json select_context(const SelectOptions &s, double reach, const char *rungs) {
  return {{"methods", {"static", "canary"}},
          {"ladder", s.ladder},
          {"ladder_reach", reach},
          {"canary",
           {{"fraction", s.settings.fraction},
            {"min_tiles", s.settings.min_tiles},
            {"confidence", s.settings.confidence},
            {"on", s.canary_on}}},
          {"method",
           std::string("ladder: per budget, the static choice and the front's ") + rungs +
               " (neither exact nor racing) whose training error is within ladder_reach times "
               "the budget, nearest the budget on a log scale first, at most `ladder` of them, "
               "fastest first, then the accurate one. ladder stage: every rung and every static "
               "choice timed (as the search times) with its error on every held-out input. "
               "canary: per held-out input, the fastest rung whose estimate plus margin is within "
               "the budget runs; holds: the test percentile of the true errors of the rungs that "
               "ran; speedup_net: the median over inputs of the accurate time over the rung's "
               "time plus the canary's (canary_ns: on the device its launches' interval and the "
               "host's time outside it, on the host the walk's wall time)"}};
}

// What changes a row's measurement: the timing, the build, the inputs and their size (the axes
// and shapes searched, budgets and percentile only change which rows are measured).
nlohmann::ordered_json tune_fingerprint(const ClEnv &env, const TuneConfig &cfg,
                                        const nlohmann::ordered_json &devices) {
  auto names = [](const std::vector<ImageSource> &sources) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto &s : sources) list.push_back(s.name);
    return list;
  };
  nlohmann::ordered_json measured = {
      {"warmup", cfg.warmup},
      {"reps", cfg.reps},
      {"cl_options", cfg.extra_build_options},
      {"size", cfg.size ? nlohmann::ordered_json{cfg.size->first, cfg.size->second}
                        : nlohmann::ordered_json(nullptr)},
      {"train", names(cfg.train)},
      {"test", names(cfg.test)}};
  // Named only when not the kernel, so documents from before --objective still resume.
  if (cfg.cold) measured["cache"] = "cold";
  if (cfg.end_to_end) measured["objective"] = "end-to-end";
  if (cfg.energy_objective) measured["objective"] = "energy";
  // Which device measured a row (its position in --devices) decides its scale.
  if (cfg.multi_device()) measured["devices"] = devices;
  if (cfg.energy_spec != "none")
    measured["energy"] = {{"source", cfg.energy ? cfg.energy->source() : "none"},
                          {"window_s", cfg.energy_options.window_s},
                          {"reps", cfg.energy_options.reps}};
  return make_fingerprint(env, cfg.kernel_root, std::move(measured));
}

// The rows of the tune document --resume continues, and what its sessions spent.
std::vector<TuneRow> resumed_tune_rows(const std::string &path,
                                       const nlohmann::ordered_json &fingerprint,
                                       nlohmann::ordered_json &earlier_harness) {
  std::vector<TuneRow> rows;
  const nlohmann::json old = read_resumable(path, "tune", fingerprint);
  try {
    if (old["context"].contains("harness")) earlier_harness = old["context"]["harness"];
    for (const auto &j : old.at("results")) rows.push_back(tune_row_from_json(j));
  } catch (const nlohmann::json::exception &e) {
    throw UsageError("--resume: " + path + " has a row kperf cannot read (" + e.what() + ")");
  }
  return rows;
}

// What was searched, on which inputs, and how.
nlohmann::ordered_json search_context(const TuneConfig &cfg, const std::string &train_dir,
                                      const std::string &test_dir,
                                      const nlohmann::ordered_json &devices) {
  auto inputs_json = [](const std::vector<ImageSource> &sources, const std::string &dir) {
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const auto &s : sources) names.push_back(s.name);
    return nlohmann::ordered_json{{"dir", dir}, {"inputs", names}};
  };
  nlohmann::ordered_json budgets = cfg.budgets;
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const auto &s : cfg.shapes) shapes.push_back(wg_label(s.x, s.y, s.vec, s.py));
  nlohmann::ordered_json space = {
      {"schemes", cfg.axes.schemes},          {"recon", cfg.axes.recons},
      {"perforate", cfg.axes.perforates},     {"load", cfg.axes.loads},
      {"output", cfg.axes.outputs},           {"output_recon", cfg.axes.output_recons},
      {"output_fill", cfg.axes.output_fills}, {"precision", cfg.axes.precisions}};
  for (const KernelAxis &axis : kernel_axes())
    if (const auto list = cfg.axes.kernel.find(axis.flag); list != cfg.axes.kernel.end())
      space[axis.field] = list->second;
  return {
      {"budgets", budgets},
      {"percentile", cfg.percentile},
      {"objective", cfg.energy_objective ? "energy"
                    : cfg.end_to_end     ? "end-to-end"
                                         : "kernel"},
      {"energy", cfg.energy_spec == "none" ? nlohmann::ordered_json(nullptr)
                 : cfg.energy ? nlohmann::ordered_json{{"source", cfg.energy->source()},
                                                       {"counter", cfg.energy->describe()}}
                              : nlohmann::ordered_json{{"source", nullptr},
                                                       {"reason", cfg.energy_absent_reason}}},
      {"train", inputs_json(cfg.train, train_dir)},
      {"test", inputs_json(cfg.test, test_dir)},
      {"size", cfg.size ? nlohmann::ordered_json{cfg.size->first, cfg.size->second}
                        : nlohmann::ordered_json(nullptr)},
      {"space", space},
      {"shapes", shapes},
      {"max_combinations", cfg.max_combinations},
      {"screen_combinations", cfg.screen_combinations},
      {"front_band", TuneConfig::kFrontBand},
      {"sweep", cfg.sweep_every_shape ? "every" : "climb"},
      {"climb_band", std::isfinite(cfg.climb_band) && !cfg.sweep_every_shape
                         ? nlohmann::ordered_json(cfg.climb_band)
                         : nlohmann::ordered_json(nullptr)},
      {"cache",
       {{"mode", cfg.cache},
        {"cold", cfg.cold},
        {"flush_bytes", cfg.flush_bytes},
        {"method", cfg.cold ? "clEnqueueFillBuffer of flush_bytes before every timed sample"
                            : "back-to-back launches"}}},
      {"rank",
       {{"finalist_band", TuneConfig::kFinalistBand},
        {"max_finalists", TuneConfig::kMaxFinalists},
        {"shape_band", TuneConfig::kShapeBand},
        {"near_shapes", TuneConfig::kNearShapes},
        {"rounds", std::min(TuneConfig::kRankRounds, cfg.rank_reps())},
        {"reps", cfg.rank_reps()},
        {"tie_tolerance", cfg.tie_tolerance}}},
      {"devices", devices},
      {"outputs_dir", cfg.outputs_dir},
      {"method",
       "probe: every single-axis variant (atom) at its largest valid block on every training "
       "input, error only; pruned when the percentile training error exceeds the largest "
       "budget. sweep (climb): the survivors timed on the first training input at their probe "
       "shape and the accurate kernel's fastest (a combination also at its atoms' fastest), "
       "then at the neighbours of their fastest shape (one of work-group, vec, py changed) "
       "until none is faster, each round only those whose fastest so far lies within "
       "climb_band of the fastest of a budget their probe error meets; the accurate kernel and "
       "Paraprox's baseline at every shape (sweep every: every survivor at every shape). "
       "combinations: the cross product of each axis group's Pareto-optimal atoms and those "
       "within front_band of its front in time, predicted (time ratios multiplied, errors "
       "added), within the largest budget, fastest predicted first, probed and swept like the "
       "atoms (screen, with screen_combinations: that many timed at their probe shape on the "
       "first training input, the max_combinations fastest measured go on). confirm: each "
       "survivor's fastest shape, and up to near_shapes more within shape_band of it, on every "
       "training input. points: each survivor at its probe shape and those. rank: per budget, "
       "the points within it whose sweep time is within finalist_band of the fastest (at most "
       "max_finalists) timed again with both baselines at their best shapes, interleaved in "
       "rounds on the first training input; of the finalists within tie_tolerance of the "
       "fastest, the lowest training error is chosen, and the choice's speedups are the rank "
       "stage's. test: the choice on every held-out input, holds when the same percentile is "
       "within the budget. Relaxed (racing) variants count the worst of several launches. Every "
       "timed stage times as cache says: cold flushes the device's cache before each sample."}};
}

// The context's "tune" block: what was searched, on which inputs, and how; with --select canary,
// the ladders and the canary too.
nlohmann::ordered_json tune_context(const TuneConfig &cfg, const std::string &train_dir,
                                    const std::string &test_dir,
                                    const nlohmann::ordered_json &devices) {
  nlohmann::ordered_json block = search_context(cfg, train_dir, test_dir, devices);
  if (cfg.select_canary) {
    block["select"] = select_context({true, cfg.ladder, cfg.canary, cfg.canary_on},
                                     TuneConfig::kLadderReach, "configurations");
    block["select"]["canary"]["calibrate"] = cfg.canary_calibrate;
  }
  return block;
}

// The context's pipeline block: the chain, the measurement and the truth, in words.
nlohmann::ordered_json fuse_json(const std::vector<bool> &fuse) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (bool f : fuse) list.push_back(f ? "all" : "none");
  return list;
}

namespace {

// --fuse-rows where it names a rolling design: beside "fuse" in a context block.
void add_fuse_rows(nlohmann::ordered_json &block, const ChainRequest &req) {
  if (req.fuse_rows != std::vector<int>{0}) block["fuse_rows"] = req.fuse_rows;
}

}  // namespace

nlohmann::ordered_json pipeline_block(const ChainRequest &req) {
  nlohmann::ordered_json stage_names = nlohmann::ordered_json::array();
  for (const auto *app : req.apps) stage_names.push_back(app->name);
  nlohmann::ordered_json block = {
      {"name", req.name},
      {"stages", stage_names},
      {"size", req.size ? Json{req.size->first, req.size->second} : Json(nullptr)},
      {"default_size", req.default_size},
      {"warmup", req.opt.warmup},
      {"reps", req.opt.reps},
      {"cold", req.opt.cold},
      {"fuse", fuse_json(req.fuse)},
      {"truth",
       "each stage's reference (a built-in's in double on the CPU, a user app's accurate "
       "kernel in double) applied to the previous stage's truth"},
      {"method",
       "each chain run launches every stage in order on one queue, each stage reading the "
       "previous stage's output buffer on the device; a stage's time is its launches' "
       "profiling events, the chain's their sum, per run; medians over --reps runs after "
       "--warmup; a fused chain (fused: true) is one launch, timed as the chain alone. "
       "Errors: each stage's output against the chained truth at that stage, by the stage "
       "app's primary metric (a fused chain's last stage alone); outputs from one run into "
       "NaN-poisoned buffers in canary bands. speedup: against the fastest accurate f32 chain "
       "of separate launches on the same input (of fused ones where there is none)"}};
  add_fuse_rows(block, req);
  return block;
}

// The context's tune_pipeline block: what was searched, how, and how it went.
Json chain_search_context(const ChainRequest &req, const ChainTuneRequest &treq,
                          const CoreOptions &opt, const std::string &cache, std::size_t chains,
                          const ChainSearch &search, const SelectOptions &select) {
  Json block = {{"name", req.name},
                {"budgets", treq.budgets},
                {"percentile", treq.percentile},
                {"tie_tolerance", treq.tie_tolerance},
                {"size", treq.size ? Json{treq.size->first, treq.size->second} : Json(nullptr)},
                {"warmup", opt.warmup},
                {"reps", opt.reps},
                {"cache", cache},
                {"cold", opt.cold},
                {"fuse", fuse_json(req.fuse)},
                {"chains", chains},
                {"measured", search.measured_count()},
                {"costliest_stage", req.apps[search.costliest_stage()]->name}};
  Json names = Json::array(), train_names = names, test_names = names;
  for (const auto *app : req.apps) names.push_back(app->name);
  for (const auto &s : treq.train) train_names.push_back(s.name);
  for (const auto &s : treq.test) test_names.push_back(s.name);
  block["stages"] = names;
  block["train"] = train_names;
  block["test"] = test_names;
  block["method"] = ChainSearch::method();
  add_fuse_rows(block, req);
  if (select.canary) block["select"] = select_context(select, TuneConfig::kLadderReach, "chains");
  return block;
}

// The rows the earlier measuring processes finished before a fault (the faulting ones among
// them), added to those of --resume.
void add_journal_rows(std::vector<TuneRow> &resumed) {
  std::set<std::string> have;
  auto id = [](const TuneRow &r) {
    return r.stage + "|" + std::to_string(r.device) + "|" + r.row.key;
  };
  for (const auto &r : resumed) have.insert(id(r));
  for (const auto &j : journal_rows()) {
    TuneRow r = tune_row_from_json(j);
    if (have.insert(id(r)).second) resumed.push_back(std::move(r));
  }
}

// The harness block: the phases, wall time, builds and rows, and what earlier sessions spent.
nlohmann::ordered_json tune_harness(nlohmann::ordered_json phases,
                                    std::chrono::steady_clock::time_point start, std::size_t builds,
                                    std::size_t rows, const nlohmann::ordered_json &earlier) {
  phases["wall_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phases["builds"] = builds;
  phases["rows"] = rows;
  if (!earlier.is_null()) phases["resumed_from"] = earlier;
  return phases;
}

// Verdicts that could not be measured (holds: null), with their reasons.
std::vector<std::string> unmeasured_verdicts(const nlohmann::ordered_json &summary) {
  std::vector<std::string> out;
  for (const auto &[app, j] : summary.items())
    for (const auto &c : j["choices"])
      if (c.contains("holds") && c["holds"].is_null())
        out.push_back(app + " at " + std::to_string(c["budget"].get<double>()) + ": " +
                      c["verdict"].get<std::string>());
  return out;
}

}  // namespace kperf
