// kperf tune --pipeline --select canary (SPEC 15): the chains' ladders, the ladder stage on the
// held-out inputs, and the walks of their canaries (chain_select.hpp).
#include "chain_select.hpp"

#include <map>
#include <set>

#include "select_walk.hpp"

namespace kperf {

namespace {

using Json = nlohmann::ordered_json;

// A rung's measure from its ladder row on one input.
RungMeasure measure_of(const ChainRow& row) {
  RungMeasure m;
  if (row.ok() && row.final_error && row.time) {
    m.error = *row.final_error;
    m.time = row.time->median;
    return m;
  }
  m.barred = row.status == Status::kDeviceFault || row.status == Status::kReferenceFailed;
  m.problem = std::string(status_name(row.status)) + ": " +
              (row.reason.empty() ? std::string("no error or time") : row.reason) + " on " +
              row.input_name;
  return m;
}

}  // namespace

std::vector<Json> select_chains(ChainMeasurer& m, TruthSource& truths, const ChainLadderInput& in,
                                const SelectOptions& s, std::vector<ChainRow>& rows, Json& canary) {
  const auto& chains = *in.chains;
  // Per budget its rungs (indices into chains), fastest first, the accurate chain last.
  std::vector<bool> usable;
  std::vector<std::string> problems;  // why the canary cannot model a measured chain
  for (std::size_t i : in.measured) {
    std::optional<std::string> problem;
    for (const PipelineStage& st : chains[i])
      if (!problem) problem = canary_problem(st);
    problems.push_back(problem.value_or(""));
    usable.push_back(!exact_chain(chains[i]) && !problem);
  }
  std::map<std::string, LadderRung> rungs;
  std::map<std::string, std::size_t> chain_of;  // every chain the ladder stage times, by label
  std::vector<LadderWalks> walks;
  auto add = [&](std::size_t chain) {
    const std::string label = chain_label(chains[chain]);
    LadderRung r{label, {}, exact_chain(chains[chain]), false};
    r.stages = chains[chain];
    rungs.emplace(label, r);
    chain_of.emplace(label, chain);
    return label;
  };
  for (std::size_t b = 0; b < in.budgets.size(); ++b) {
    std::vector<std::string> ladder;
    for (std::size_t i : ladder_rule(in.points, usable, in.chosen[b], in.budgets[b],
                                     TuneConfig::kLadderReach, s.ladder))
      ladder.push_back(add(in.measured[i]));
    if (in.accurate) ladder.push_back(add(*in.accurate));
    std::string fixed;
    if (in.chosen[b]) {
      const std::size_t chain = in.measured[*in.chosen[b]];
      fixed = chain_label(chains[chain]);
      chain_of.emplace(fixed, chain);
    }
    walks.emplace_back(ladder, in.budgets[b], fixed);
  }
  // The ladder stage: every rung and static choice timed on each held-out input, bound once.
  std::map<std::string, RungMeasures> measures;  // by input
  for (const ImageSource& src : in.test) {
    m.bind(src.name, load_image_source(src, in.size));
    for (const auto& [label, chain] : chain_of) {
      ChainRow row = m.measure(chains[chain], "ladder");
      measures[src.name][label] = measure_of(row);
      if (row.status == Status::kDeviceFault && rungs.count(label)) rungs.at(label).faulted = true;
      rows.push_back(std::move(row));
    }
  }
  // The canaries, input by input: each rung's alone, then each budget's walk.
  CanaryInput cin;
  cin.settings = s.settings;
  CanaryPlacement where;
  where.reason = "kperf tune --pipeline keeps the host canary (--canary-on " + s.canary_on +
                 "): the device canary takes one app's ladder per call, and no chains";
  for (const PipelineStage& st : chains.front()) {
    cin.evaluators.push_back(truths.evaluator(*st.app));
    where.user_truth_kernel = where.user_truth_kernel || st.app->user();
  }
  Json estimates = Json::array();
  for (const ImageSource& src : in.test) {
    const Grid grid = load_image_source(src, in.size);
    cin.name = src.name;
    cin.grid = &grid;
    estimate_rungs(cin, rungs, measures[src.name], estimates);
    for (LadderWalks& w : walks) w.walk(cin, rungs, measures[src.name]);
  }
  const Json tracking = tracking_json(estimates);
  canary = {{"estimates", estimates}, {"tracking", tracking}};
  std::vector<Json> out;
  for (std::size_t b = 0; b < walks.size(); ++b) {
    const Json settings =
        canary_settings_json(s.settings, where, walks[b].ladder(), tracking["median_fraction"]);
    out.push_back(walks[b].json(settings, in.percentile));
    // The front's chains within reach of the budget that the ladder leaves off, and why.
    Json left_off = Json::array();
    for (std::size_t i : pareto_indices(in.points))
      if (!problems[i].empty() && in.points[i].error <= TuneConfig::kLadderReach * in.budgets[b])
        left_off.push_back(
            {{"rung", chain_label(chains[in.measured[i]])}, {"reason", problems[i]}});
    out.back()["left_off"] = left_off;
  }
  return out;
}

}  // namespace kperf
