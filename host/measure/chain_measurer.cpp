// Chains measured under the fault journal (chain_measurer.hpp).
#include "chain_measurer.hpp"

#include <filesystem>
#include <map>
#include <set>

#include "fault_journal.hpp"
#include "injected_faults.hpp"

namespace kperf {

namespace fs = std::filesystem;

ChainMeasurer::ChainMeasurer(Core& core, TruthSource& truths, std::string pipeline,
                             std::vector<const AppDescriptor*> apps)
    : core_(core), truths_(truths), pipeline_(std::move(pipeline)), apps_(std::move(apps)) {}

void ChainMeasurer::bind(const std::string& name, Grid grid, bool with_truth) {
  in_ = bind_input(apps_, name, std::move(grid));
  if (with_truth) {
    const nlohmann::ordered_json workload = {{"app", pipeline_}, {"input", name}};
    if (!journaled_truth(truths_, in_, workload)) {
      faulted_ = true;
      if (supervised()) exit_for_restart();
    }
    faulted_ = faulted_ || in_.truth_status == Status::kDeviceFault;
  }
  core_.bind(in_);
}

ChainRow ChainMeasurer::measure(const Chain& chain, const std::string& stage,
                                std::optional<int> round, MeasureMode mode) {
  const std::string key = chain_key(pipeline_, chain, in_.name, in_.width, in_.height);
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  if (!stage.empty()) fields["stage"] = stage;
  if (round) fields["round"] = *round;
  if (const auto done = journaled_row(key, fields)) {
    ChainRow row = chain_row_from_json(*done);
    faulted_ = faulted_ || row.status == Status::kDeviceFault;
    return row;
  }
  Measurement m;
  m.stages.resize(chain.size());
  if (!journal_stop().empty()) {
    m.fail(Status::kDeviceFault, "not measured: " + journal_stop());
    return row_of(chain, m, stage, round);
  }
  journal_begin(to_json(row_of(chain, m, stage, round)), "chain runs");
  m = core_.measure(in_, chain, key, mode, stage);
  if (!save_dir_.empty() && m.ok() && !m.stages.back().output.empty()) save_outputs(m, key);
  const ChainRow row = row_of(chain, m, stage, round);
  journal_row(to_json(row));
  journal_end();
  if (row.status == Status::kDeviceFault) {
    faulted_ = true;
    if (supervised() && core_.lost()) exit_for_restart();
  }
  return row;
}

// One chain's row: every stage's time and its error against the chained truth, the chain's time and
// the last stage's error.
ChainRow ChainMeasurer::row_of(const Chain& chain, const Measurement& m, const std::string& stage,
                               std::optional<int> round) const {
  ChainRow row;
  row.key = chain_key(pipeline_, chain, in_.name, in_.width, in_.height);
  row.pipeline = pipeline_;
  row.input_name = in_.name;
  row.width = in_.width;
  row.height = in_.height;
  row.status = m.status;
  row.reason = m.reason;
  row.fused = is_fused(chain);
  row.fuse_rows = fuse_rows(chain);
  row.exact = exact_chain(chain);
  row.stage = stage;
  row.round = round;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    const StageMeasurement& sm = m.stages[k];
    StageRow j;
    j.app = s.app->name;
    j.variant = s.variant.id();
    j.family = s.variant.family();
    j.wg = wg_label(s.wg.x, s.wg.y, s.wg.vec, s.wg.py);
    j.precision = s.variant.precision_info().name;
    j.metric = metric_name(s.app->primary_metric);
    j.reference = k < in_.references.size() ? in_.references[k] : std::string("none");
    if (!sm.samples_ns.empty()) j.time = summarize(sm.samples_ns);
    if (sm.errors) {
      j.error = sm.errors->value(s.app->primary_metric);
      j.errors = sm.errors;
    }
    j.build_log = sm.build_log;
    j.output_file = sm.output_file;
    row.stages.push_back(std::move(j));
    if (k + 1 < chain.size()) row.intermediate.push_back(intermediate_type(s.variant).name);
  }
  if (!m.samples_ns.empty()) {
    row.time = summarize(m.samples_ns);
    row.samples_ns = m.samples_ns;
  }
  const bool output_lost =
      m.status == Status::kHostError && !m.stages.empty() && m.stages.back().errors.has_value();
  if ((m.ok() || output_lost) && row.stages.back().error) row.final_error = row.stages.back().error;
  if (!m.stages.empty()) row.output_file = m.stages.back().output_file;
  return row;
}

void ChainMeasurer::save_outputs(Measurement& m, const std::string& key) const {
  // Every stage's output that was read back: an earlier stage's as <key>.stageK.npy (a fused
  // chain's earlier stages have none: they stay in local memory), the last one's as <key>.npy.
  const std::string base = key_to_filename(key);
  const std::string stem = base.substr(0, base.size() - 4);
  for (std::size_t k = 0; k < m.stages.size(); ++k) {
    StageMeasurement& stage = m.stages[k];
    if (stage.output.empty()) continue;
    const bool last = k + 1 == m.stages.size();
    const fs::path file =
        fs::path(save_dir_) / (last ? base : stem + ".stage" + std::to_string(k + 1) + ".npy");
    try {
      write_output_npy(file.string(), stage.output, in_.width, in_.height);
      stage.output_file = file.string();
    } catch (const std::exception& e) {
      m.fail(Status::kHostError, std::string("--save-outputs: ") + e.what());
      return;
    }
  }
}

void prebuild_chains(ClEnv& env, Core& core, const std::vector<Chain>& chains) {
  std::set<std::pair<std::string, std::string>> jobs;
  for (const Chain& chain : chains)
    for (auto& job : core.programs(chain)) jobs.insert(std::move(job));
  // As the runner's prebuild: after a compiler crash here, each chain builds its stages under the
  // journal, where a crash is that chain's fault.
  if (journal_skip_prebuild()) return;
  journal_begin_prebuild(jobs.size());
  env.prebuild({jobs.begin(), jobs.end()}, build_threads(env.info()));
  journal_end();
}

const ChainRow* fastest_exact(const std::vector<ChainRow>& rows, const std::string& input) {
  const ChainRow* best[2] = {nullptr, nullptr};  // unfused, fused
  for (const ChainRow& r : rows) {
    if (!r.ok() || !r.exact || r.input_name != input || !r.time) continue;
    const ChainRow*& b = best[r.fused ? 1 : 0];
    if (!b || r.time->median < b->time->median) b = &r;
  }
  return best[0] ? best[0] : best[1];
}

void add_chain_speedups(std::vector<ChainRow>& rows) {
  std::map<std::string, double> best;
  for (const ChainRow& r : rows) {
    if (best.count(r.input_name)) continue;
    if (const ChainRow* base = fastest_exact(rows, r.input_name))
      best[r.input_name] = base->time->median;
  }
  for (ChainRow& r : rows) {
    const auto it = best.find(r.input_name);
    if (r.ok() && it != best.end() && r.time) {
      r.accurate_time_ns = it->second;
      r.speedup = it->second / r.time->median;
    }
  }
}

}  // namespace kperf
