// The chain tuner (chain_tune.hpp): the chains of a product space, the screen, the training
// measurements, the rank stage, the choices with their held-out verdicts, and the front.
#include "chain_tune.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "phases.hpp"

namespace kperf {

namespace {

using Json = nlohmann::ordered_json;

// Whether every stage but `stage` is exact; `stage` may be anything.
bool alone_at(const Chain& chain, std::size_t stage) {
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (k != stage && !is_exact(chain[k].variant)) return false;
  return true;
}

// The same approximation at every stage: every axis alike but the precision, and every stage
// reading its input in the same stored type. Half storage throughout is f16 stages then an f16in
// one (each reads half; the last writes the final output in float).
bool uniform(const Chain& chain) {
  auto approximation = [](const Variant& v) {
    Variant stored_f32 = v;
    stored_f32.precision = nullptr;
    return stored_f32.id() + " reading " + v.precision_info().in->name;
  };
  for (const auto& s : chain)
    if (approximation(s.variant) != approximation(chain[0].variant)) return false;
  return true;
}

}  // namespace

std::vector<Chain> chains_of(const std::vector<const AppDescriptor*>& apps,
                             const std::vector<StageSpace>& spaces, const std::vector<bool>& fuse,
                             const std::vector<int>& fuse_rows) {
  std::vector<Chain> all;
  const Variant accurate = default_variant();
  for (const bool fused : fuse)
    for (const int rows : fused ? fuse_rows : std::vector<int>{0}) {
      std::vector<Chain> chains = {{}};
      for (std::size_t k = 0; k < apps.size(); ++k) {
        std::vector<Variant> variants = spaces[k].variants;
        if (std::none_of(variants.begin(), variants.end(),
                         [&](const Variant& v) { return v.id() == accurate.id(); }))
          variants.insert(variants.begin(), accurate);
        // A fused chain has one launch shape, the last stage's.
        const std::vector<WorkGroup> shapes =
            fused && k + 1 < apps.size() ? std::vector<WorkGroup>{WorkGroup{}} : spaces[k].shapes;
        std::vector<Chain> next;
        for (const auto& prefix : chains)
          for (const auto& v : variants)
            for (const auto& wg : shapes) {
              auto chain = prefix;
              chain.push_back({apps[k], v, wg, fused, rows});
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

Grid ChainSearch::load(const ImageSource& src) {
  const double start = now_s();
  Grid g = load_image_source(src, req_.size);
  load_s_ += now_s() - start;
  return g;
}

// Every chain timed, and judged, on the first training input.
void ChainSearch::screen() {
  m_.bind(req_.train[0].name, load(req_.train[0]));
  for (std::size_t i = 0; i < chains_.size(); ++i) {
    ChainRow row = m_.measure(chains_[i], "screen");
    if (row.ok() && row.time && row.final_error) {
      screened_.push_back({i, row.time->median, *row.final_error, {*row.final_error}, row, {}});
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
  std::vector<ChainCandidate*> alive;
  for (ChainCandidate& c : screened_)
    if (c.error <= 2 * req_.budgets.back() || exact_chain(chains_[c.chain])) alive.push_back(&c);
  for (std::size_t i = 1; i < req_.train.size(); ++i) {
    m_.bind(req_.train[i].name, load(req_.train[i]));
    std::vector<ChainCandidate*> still;
    for (ChainCandidate* c : alive) {
      ChainRow row =
          m_.measure(chains_[c->chain], "measure", std::nullopt, MeasureMode::kFinalError);
      if (row.ok() && row.final_error) {
        c->train_errors.push_back(*row.final_error);
        still.push_back(c);
      }
      rows_.push_back(std::move(row));
    }
    alive = std::move(still);
  }
  for (ChainCandidate* c : alive) {
    c->error = percentile(c->train_errors, req_.percentile);
    measured_.push_back(*c);
  }
}

const ChainCandidate* ChainSearch::fastest_within(
    double budget, const std::function<bool(const ChainCandidate&)>& admit) const {
  const ChainCandidate* best = nullptr;
  for (const auto& c : measured_)
    if (c.error <= budget && admit(c) && (!best || c.time < best->time)) best = &c;
  return best;
}

std::vector<const ChainCandidate*> ChainSearch::finalists(double budget) const {
  std::vector<FrontPoint> points;
  for (const auto& c : measured_) points.push_back({c.time, c.error});
  std::vector<const ChainCandidate*> out;
  for (std::size_t i : finalist_indices(points, budget)) out.push_back(&measured_[i]);
  return out;
}

std::size_t ChainSearch::costliest_stage() const {
  std::size_t costliest = 0;
  // A fused baseline's one launch has no stage times (only where no unfused chain is screened).
  if (!base_ || is_fused(chains_[screened_[*base_].chain])) return costliest;
  const std::vector<StageRow>& stages = screened_[*base_].screen_row.stages;
  for (std::size_t k = 1; k < stages.size(); ++k)
    if (stages[k].time && stages[costliest].time &&
        stages[k].time->median > stages[costliest].time->median)
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
    for (const ChainCandidate* c : finalists(budget)) chains.insert(c->chain);
    for (const ChainCandidate* c :
         {fastest_within(budget,
                         [&](const ChainCandidate& c) { return uniform(chains_[c.chain]); }),
          fastest_within(budget, [&](const ChainCandidate& c) {
            return alone_at(chains_[c.chain], costliest);
          })})
      if (c) chains.insert(c->chain);
  }
  if (base_) chains.insert(screened_[*base_].chain);
  if (chains.empty()) return;
  m_.bind(req_.train[0].name, load(req_.train[0]), false);
  std::map<std::size_t, std::vector<double>> samples;
  for (int round = 0; round < TuneConfig::kRankRounds; ++round)
    for (std::size_t chain : chains) {
      ChainRow row = m_.measure(chains_[chain], "rank", round, MeasureMode::kTimeOnly);
      if (row.ok())
        for (std::uint64_t t : row.samples_ns) samples[chain].push_back(static_cast<double>(t));
      rows_.push_back(std::move(row));
    }
  for (auto& c : measured_)
    if (samples.count(c.chain)) c.rank_time = percentile(samples[c.chain], 50);
  if (base_ && samples.count(screened_[*base_].chain))
    base_rank_time_ = percentile(samples[screened_[*base_].chain], 50);
}

Json ChainSearch::candidate_json(const ChainCandidate& c) const {
  Json stages = Json::array();
  for (const StageRow& s : c.screen_row.stages)
    stages.push_back({{"app", s.app}, {"variant", s.variant}, {"wg", s.wg}});
  const double base_time = base_ ? screened_[*base_].time : NAN;
  Json j = {{"key", c.screen_row.key},
            {"fused", c.screen_row.fused},
            {"stages", stages},
            {"time_ns", c.time},
            {"speedup", number_or_null(base_time / c.time)},
            {"train_error", c.error},
            {"train_errors", c.train_errors},
            {"intermediate", c.screen_row.intermediate}};
  if (c.screen_row.fuse_rows) j["fuse_rows"] = c.screen_row.fuse_rows;
  if (c.rank_time) {
    j["rank_time_ns"] = *c.rank_time;
    if (base_rank_time_) j["rank_speedup"] = *base_rank_time_ / *c.rank_time;
  }
  return j;
}

std::map<std::size_t, std::pair<std::vector<HeldOutError>, std::string>> ChainSearch::held_out() {
  std::map<std::size_t, std::pair<std::vector<HeldOutError>, std::string>> test;
  for (const auto& [budget, c] : chosen_)
    if (c) test[c->chain] = {};
  for (const ImageSource& src : req_.test) {
    if (test.empty()) break;
    m_.bind(src.name, load(src));
    for (auto& [chain, t] : test) {
      auto& [errors, problem] = t;
      if (!problem.empty()) continue;
      ChainRow row = m_.measure(chains_[chain], "test", std::nullopt, MeasureMode::kFinalError);
      if (row.ok() && row.final_error)
        errors.push_back({src.name, *row.final_error, row.key, row.output_file});
      else
        problem = std::string(status_name(row.status)) + ": " + row.reason + " on " + src.name;
      rows_.push_back(std::move(row));
    }
  }
  return test;
}

// Per budget: the stable rule over its ranked finalists (of those within the tie tolerance of the
// fastest, the lowest training error), checked on every held-out input, one input at a time.
Json ChainSearch::choices() {
  for (double budget : req_.budgets) {
    std::vector<const ChainCandidate*> finals = finalists(budget);
    std::vector<RankedCandidate> ranked;
    for (const ChainCandidate* c : finals)
      ranked.push_back({c->rank_time.value_or(c->time), c->error});
    const auto pick = stable_choice(ranked, req_.tie_tolerance);
    chosen_[budget] = pick ? finals[*pick] : nullptr;
  }
  const auto test = held_out();
  const std::size_t costliest = costliest_stage();
  // A training input whose truth is broken (SPEC 15) leaves no chain to choose, and no verdict.
  const ChainRow* broken = nullptr;
  for (const ChainRow& row : rows_)
    if (row.stage != "test" && row.status == Status::kReferenceFailed) {
      broken = &row;
      break;
    }
  Json list = Json::array();
  for (double budget : req_.budgets) {
    const ChainCandidate* c = broken ? nullptr : chosen_[budget];
    const ChainCandidate* flat =
        fastest_within(budget, [&](const ChainCandidate& x) { return uniform(chains_[x.chain]); });
    const ChainCandidate* alone = fastest_within(
        budget, [&](const ChainCandidate& x) { return alone_at(chains_[x.chain], costliest); });
    Json cj = {{"budget", budget}};
    cj["chosen"] = c ? candidate_json(*c) : Json(nullptr);
    Json finals = Json::array();
    for (const ChainCandidate* f : finalists(budget)) finals.push_back(candidate_json(*f));
    cj["finalists"] = finals;
    cj["best_uniform"] = flat ? candidate_json(*flat) : Json(nullptr);
    cj["best_costliest_stage_alone"] = alone ? candidate_json(*alone) : Json(nullptr);
    if (broken) {
      add_broken_truth_verdict(cj, broken->input_name, broken->reason);
    } else if (!c) {
      cj["holds"] = nullptr;
      cj["verdict"] = "no chain is within the budget on the training inputs";
    } else {
      const auto& [errors, problem] = test.at(c->chain);
      add_held_out_verdict(cj, errors, problem, budget, req_.percentile,
                           exact_chain(chains_[c->chain]));
    }
    list.push_back(cj);
  }
  return list;
}

ChainLadderInput ChainSearch::ladder_input() const {
  ChainLadderInput in;
  in.chains = &chains_;
  for (const ChainCandidate& c : measured_) {
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
  std::vector<FrontPoint> points;
  for (const auto& c : measured_) points.push_back({c.time, c.error});
  Json front = Json::array();
  for (std::size_t i : pareto_indices(points)) front.push_back(candidate_json(measured_[i]));
  return front;
}

Json ChainSearch::measured_json() const {
  Json list = Json::array();
  for (const auto& c : measured_) list.push_back(candidate_json(c));
  return list;
}

const char* ChainSearch::method() {
  return "screen: every chain of the stages' product timed and judged on the first training "
         "input. measure: the chains within twice the largest budget there (and the accurate "
         "chains), their final error on every training input, at the percentile. front: the "
         "measured chains no other beats on both screen time and training error. rank: per "
         "budget the measured chains within it whose screen time is within 10 % of the fastest "
         "(at most 8), its best uniform and costliest-stage-alone chains and the accurate chain, "
         "timed again on the first training input in 6 interleaved rounds; the choice is the "
         "lowest training error of the finalists within the tie tolerance of the fastest rank "
         "time, checked on every held-out input. uniform: one approximation at every stage, each "
         "reading its input in one stored type; costliest stage alone: only the costliest stage "
         "of the accurate chain approximated. fused chains (--fuse all) are candidates like the "
         "others. speedup: against the fastest accurate f32 chain of separate launches in the "
         "screen (of fused ones where none is); rank_speedup: against its rank time";
}

}  // namespace kperf
