// The tuner's stages: measuring one (on this device and the workers of --devices), resuming its
// rows, and judging what it measured (probes, sweeps, the screen, faults).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

#include "fault_journal.hpp"
#include "gzip.hpp"
#include "kernel_axes.hpp"
#include "stats.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

namespace kperf {

using namespace tune_detail;

bool TuneStages::stage(const std::string &name, StageInputs inputs, const Plan &plan, bool timed,
                       bool save, const std::string &baseline_stage, const Checkpoint &checkpoint) {
  if (plan.empty()) return true;
  std::set<std::string> skip_keys;
  for (const auto &r : t_.ledger_->rows())
    if (r.stage == name) skip_keys.insert(r.row.key);
  // The rank stage times an app's finalists beside its accurate kernel in one process: on the
  // app's home device, or here when apps have no homes.
  // The ladder's rungs are timed beside the accurate kernel on each held-out input, here.
  if (!t_.cfg_.multi_device() || (name == "rank" && !t_.ledger_->apps_have_homes()) ||
      name == "ladder")
    return measure(name, inputs, plan, timed, save, skip_keys, checkpoint);

  const TuneSpace space = t_.donor_space();
  const std::vector<Plan> shares = shares_of(plan, space);
  const double start = now_s(), measured_before = t_.stage_s_[name];
  std::vector<std::unique_ptr<StageWorker>> workers;
  for (std::size_t d = 1; d < shares.size(); ++d)
    if (!shares[d].empty())
      workers.push_back(
          start_worker(name, inputs, shares[d], d, timed, save, baseline_stage, space));
  bool complete = measure(name, inputs, shares[0], timed, save, skip_keys, checkpoint);
  std::string problem;
  for (auto &w : workers) {
    StageWorker::Result result = w->finish(interrupt_requested());
    if (!result.lost.empty()) add_unmeasured(*w, result);
    for (auto &row : result.rows) {
      const bool baseline =
          timed && row.variant == t_.base_id_ && t_.ledger_->home_device(row.app) != w->slot();
      journal_row(
          to_json(t_.ledger_->add({baseline ? baseline_stage : name, std::move(row),
                                   w->slot()})));  // a restarted tune keeps the other devices' rows
    }
    t_.copy_gbps_ = std::max(t_.copy_gbps_, result.copy_gbps);
    for (auto it = result.phases.begin(); it != result.phases.end(); ++it)
      if (it.value().is_number()) t_.runner_phase_s_[it.key()] += it.value().get<double>();
    if (result.interrupted) complete = false;
    if (!result.problem.empty() && problem.empty()) problem = result.problem;
  }
  t_.stage_s_[name] =
      measured_before + (now_s() - start);  // the stage's wall time, workers included
  checkpoint(t_.ledger_->rows());
  if (!problem.empty()) throw std::runtime_error(problem);
  return complete;
}

// With at least as many apps as devices, each app lives on its home device in every stage: no
// process computes another's references, and every speedup is within one device, as in a
// one-device tune. Otherwise units (an app's variant at its shapes) go to the least loaded device,
// largest first, and the accurate kernel stays on the first, whose times are the scale of the
// others.
std::vector<Tuner::Plan> TuneStages::shares_of(const Plan &plan, const TuneSpace &space) const {
  const std::size_t devices = 1 + t_.cfg_.worker_devices.size();
  std::vector<Plan> shares(devices);
  std::vector<std::size_t> load(devices, 0);
  struct Unit {
    std::string app, id;
    const std::pair<Variant, std::vector<WorkGroup>> *entry;
  };
  std::vector<Unit> units;
  for (const auto &[app, variants] : plan.apps)
    for (const auto &[id, entry] : variants) {
      const int home = t_.ledger_->home_device(app);
      bool sendable = id != t_.base_id_ || home != 0;
      if (sendable) try {
          donor_indices(space, entry.first);
        } catch (const std::invalid_argument &) {
          sendable = false;  // measured here
        }
      if (!sendable && home != 0)
        throw std::logic_error("kperf tune cannot name " + id + " to the worker of " + app);
      if (t_.ledger_->apps_have_homes() || !sendable) {
        shares[home].apps[app][id] = entry;
        load[home] += entry.second.size();
      } else {
        units.push_back({app, id, &entry});
      }
    }
  std::stable_sort(units.begin(), units.end(), [](const Unit &a, const Unit &b) {
    return a.entry->second.size() > b.entry->second.size();
  });
  for (const Unit &u : units) {
    const std::size_t d =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shares[d].apps[u.app][u.id] = *u.entry;
    load[d] += u.entry->second.size();
  }
  return shares;
}

std::unique_ptr<StageWorker> TuneStages::start_worker(const std::string &name, StageInputs inputs,
                                                      const Plan &share, std::size_t d, bool timed,
                                                      bool save, const std::string &baseline_stage,
                                                      const TuneSpace &space) const {
  std::set<std::string> apps_here;
  nlohmann::ordered_json units_json = nlohmann::ordered_json::array();
  auto add_unit = [&](const std::string &app, const Variant &v,
                      const std::vector<WorkGroup> &shapes) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto &wg : shapes) list.push_back({wg.x, wg.y, wg.vec, wg.py});
    units_json.push_back({{"app", app},
                          {"variant", variant_id(v)},
                          {"donors", donor_indices(space, v)},
                          {"shapes", list}});
  };
  for (const auto &[app, variants] : share.apps)
    for (const auto &[id, entry] : variants) {
      add_unit(app, entry.first, entry.second);
      if (t_.ledger_->home_device(app) != static_cast<int>(d)) apps_here.insert(app);
    }
  // What it measured before an interruption is not measured again. For an app whose home is
  // another device, it measures its own accurate kernel, for its scale, whatever the home
  // device's sweep holds.
  std::set<std::string> skip;
  for (const auto &r : t_.ledger_->rows()) {
    const bool scale_of_another =
        timed && r.row.variant == t_.base_id_ && apps_here.count(r.row.app);
    if ((r.stage == name && !scale_of_another) ||
        (timed && r.stage == baseline_stage && r.device == static_cast<int>(d)))
      skip.insert(r.row.key);
  }
  if (timed)
    for (const auto &app : apps_here) add_unit(app, t_.base_, t_.cfg_.shapes);
  nlohmann::ordered_json request = {{"args", t_.cfg_.command_args},
                                    {"stage", name},
                                    {"inputs", inputs_name(inputs)},
                                    {"timed", timed},
                                    {"save", save},
                                    {"outputs_dir", t_.cfg_.outputs_dir},
                                    {"skip_keys", skip},
                                    {"units", units_json}};
  return std::make_unique<StageWorker>(std::move(request), static_cast<int>(d),
                                       t_.cfg_.worker_devices[d - 1], inputs_of(inputs).size());
}

RunConfig TuneStages::plan_config(const Plan &plan, StageInputs inputs) const {
  RunConfig rc;
  std::set<std::string> variant_seen;
  std::set<WorkGroup> shape_set;
  for (auto *app : t_.cfg_.apps) {
    const auto it = plan.apps.find(app->name);
    if (it == plan.apps.end() || it->second.empty()) continue;
    rc.apps.push_back(app);
    for (const auto &[id, entry] : it->second) {
      if (variant_seen.insert(id).second) rc.variants.push_back(entry.first);
      shape_set.insert(entry.second.begin(), entry.second.end());
    }
  }
  for (const auto &wg : t_.cfg_.shapes)
    if (shape_set.count(wg)) rc.wgs.push_back(wg);
  rc.image_inputs = inputs_of(inputs);
  if (t_.cfg_.size) rc.sizes = {*t_.cfg_.size};
  rc.kernel_root = t_.cfg_.kernel_root;
  // `plan` outlives the runner that reads it.
  rc.only = [&plan](const AppDescriptor &app, const Variant &v, const WorkGroup &wg) {
    const auto a = plan.apps.find(app.name);
    if (a == plan.apps.end()) return false;
    const auto e = a->second.find(variant_id(v));
    if (e == a->second.end()) return false;
    const auto &shapes = e->second.second;
    return std::find(shapes.begin(), shapes.end(), wg) != shapes.end();
  };
  return rc;
}

bool TuneStages::measure(const std::string &name, StageInputs inputs, const Plan &plan, bool timed,
                         bool save, const std::set<std::string> &skip_keys,
                         const Checkpoint &checkpoint) {
  if (plan.empty()) return true;
  const double start = now_s();
  RunConfig rc = plan_config(plan, inputs);
  rc.transfers = timed && t_.cfg_.end_to_end;
  rc.energy_requested = timed && t_.cfg_.energy_spec != "none";
  rc.energy = rc.energy_requested ? t_.cfg_.energy : nullptr;
  rc.energy_options = t_.cfg_.energy_options;
  rc.energy_absent_reason = t_.cfg_.energy_absent_reason;
  rc.warmup = timed ? t_.cfg_.warmup : 0;
  rc.reps = timed ? t_.cfg_.reps : 1;
  rc.cold = timed && t_.cfg_.cold;
  if (name == "rank") {
    rc.reps = t_.cfg_.rank_reps();
    rc.rounds = std::min(TuneConfig::kRankRounds, rc.reps);
  }
  rc.extra_build_options = t_.cfg_.extra_build_options;
  rc.compile_worker_exe = t_.cfg_.compile_worker_exe;
  if (save) rc.save_outputs_dir = t_.cfg_.outputs_dir;
  rc.ssim = save;  // the search needs the primary metric alone; SSIM costs the most
  rc.progress = t_.cfg_.progress;
  rc.progress_label = "tune " + name + " ";
  rc.skip_keys = skip_keys;
  rc.journal_fields = {{"stage", name}};
  rc.truth_cache = t_.truths_;
  rc.residency = t_.residency_;
  Runner runner(t_.env_, rc);
  double last_checkpoint = now_s();
  const double checkpoint_s = checkpoint_interval_s();
  runner.run([&](ResultRow row) {
    t_.ledger_->add({name, std::move(row)});
    if (now_s() - last_checkpoint >= checkpoint_s) {
      checkpoint(t_.ledger_->rows());
      last_checkpoint = now_s();
    }
  });
  t_.stopped_ = t_.stopped_ || runner.stopped();
  if (timed) t_.copy_gbps_ = std::max(t_.copy_gbps_, runner.copies().largest_gbps());
  const nlohmann::ordered_json phases = runner.phases_json();
  for (auto it = phases.begin(); it != phases.end(); ++it)
    t_.runner_phase_s_[it.key()] += it.value().get<double>();
  const nlohmann::ordered_json workers = runner.compile_workers_json();
  for (auto it = workers.begin(); it != workers.end(); ++it) {
    double &total = t_.compile_workers_[it.key()];
    const double value = it.value().get<double>();
    total = it.key() == "processes" ? std::max(total, value) : total + value;
  }
  t_.stage_s_[name] += now_s() - start;
  checkpoint(t_.ledger_->rows());
  return !runner.interrupted();
}

bool Tuner::run_share(const nlohmann::json &request, const Checkpoint &checkpoint) {
  set_baselines();
  const std::string stage_name = request.at("stage").get<std::string>();
  injected_stage_hang(stage_name);
  auto skip = request.at("skip_keys").get<std::set<std::string>>();
  for (const TuneRow &r : ledger_->rows())  // what an earlier process of this share measured
    if (r.stage == stage_name) skip.insert(r.row.key);
  return TuneStages(*this).measure(
      stage_name, inputs_from_name(request.at("inputs").get<std::string>()),
      TuneStages(*this).plan_of_request(request), request.at("timed").get<bool>(),
      request.at("save").get<bool>(), skip, checkpoint);
}

nlohmann::ordered_json Tuner::phases_json() const {
  nlohmann::ordered_json stages = nlohmann::ordered_json::object(), phases = stages;
  for (const auto &[k, v] : stage_s_) stages[k] = v;
  for (const auto &[k, v] : runner_phase_s_) phases[k] = v;
  auto worker = [&](const char *key) {
    const auto it = compile_workers_.find(key);
    return it == compile_workers_.end() ? 0.0 : it->second;
  };
  return {{"stages_s", stages},
          {"phases_s", phases},
          {"compile_workers",
           {{"processes", static_cast<std::size_t>(worker("processes"))},
            {"programs", static_cast<std::size_t>(worker("programs"))},
            {"starts", static_cast<std::size_t>(worker("starts"))},
            {"batches", static_cast<std::size_t>(worker("batches"))},
            {"seconds", worker("seconds")}}},
          {"truth_cache", {{"hits", truths_->hits}, {"grids", truths_->grids.size()}}},
          {"device_residency", residency_->to_json()}};
}

double TuneReport::best_time_of(const std::string &app, const std::string &id) const {
  const auto a = t_.states_.find(app);
  if (a == t_.states_.end()) return 0;
  const auto s = a->second.find(id);
  return s != a->second.end() && s->second.best ? s->second.best_time : 0;
}

// The shape with the largest block of outputs that the device and the variant accept: tile
// edges (where perforation and halo skipping lose the most) shrink as the block grows, so a
// variant is judged where it errs least.
std::optional<WorkGroup> Tuner::probe_shape(const AppDescriptor &app, const Variant &v,
                                            std::string &why) const {
  std::optional<WorkGroup> best;
  long best_area = -1;
  for (const auto &wg : cfg_.shapes) {
    if (const auto verdict = check_launch(app, v, wg, env_.info())) {
      if (why.empty()) why = std::string(status_name(verdict->status)) + ": " + verdict->reason;
      continue;
    }
    const WorkGroup b = block_of(v, wg);
    const long area = static_cast<long>(b.x) * b.y;
    if (area > best_area) best = wg, best_area = area;
  }
  return best;
}

Tuner::State *Tuner::add(const AppDescriptor &app, const Variant &v, const std::string &origin) {
  const std::string id = variant_id(v);
  auto &m = states_[app.name];
  if (m.count(id)) return nullptr;
  State s;
  s.v = v;
  s.origin = origin;
  std::string why;
  s.probe = probe_shape(app, v, why);
  if (!s.probe) {
    s.problem = "no launch shape runs it (" + why + ")";
    s.pruned_at = "plan";
  }
  order_[app.name].push_back(id);
  if (origin == "combination") ledger_->mark_combination(app.name, id);
  return &m.emplace(id, std::move(s)).first->second;
}

Tuner::Plan Tuner::plan_of(const std::string &origin_prefix, bool every_shape) {
  Plan plan;
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name])
      if (s.origin.rfind(origin_prefix, 0) == 0 && s.problem.empty())
        plan.apps[app->name][id] = {s.v, every_shape ? cfg_.shapes : std::vector{*s.probe}};
  return plan;
}

// After a probe: the percentile training error, and pruning above the largest budget.
void Tuner::judge_probes(const std::string &origin_prefix) {
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin.rfind(origin_prefix, 0) != 0 || !s.problem.empty()) continue;
      std::string problem;
      const auto errors = ledger_->train_errors("probe", *app, s.v, *s.probe, problem);
      if (!problem.empty()) {
        s.problem = problem;
        s.pruned_at = "probe";
        continue;
      }
      s.probe_error = percentile(errors, cfg_.percentile);
      if (s.probe_error > cfg_.budgets.back() && !is_exact(s.v)) {
        s.problem = "training error above the largest budget at the probe shape";
        s.pruned_at = "probe";
      }
    }
}

// After a sweep: each survivor's fastest shape on the first training input.
void Tuner::judge_sweeps(const std::string &origin_prefix) {
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin.rfind(origin_prefix, 0) != 0 || !s.problem.empty()) continue;
      s.swept = true;
      if (const auto f = TuneStages(*this).fastest_swept(*app, id)) {
        std::tie(s.best, s.best_time) = *f;
        continue;
      }
      std::string reasons;  // the first row's, of those that gave no time
      for (const auto &wg : cfg_.shapes) {
        const TuneRow *found =
            ledger_->find("sweep", app->name, id, shape_label(wg), cfg_.train[0].name);
        if (found && reasons.empty())
          reasons = found->row.ok()
                        ? "no accurate baseline on device " + std::to_string(found->device)
                        : std::string(status_name(found->row.status)) + ": " + found->row.reason;
      }
      s.problem = "no launch shape ran (" + reasons + ")";
      s.pruned_at = "sweep";
    }
}

// After the screen: each app's combinations ranked by their time at the probe shape on the first
// training input; those past --max-combinations leave the search.
void Tuner::judge_screen() {
  for (auto *app : cfg_.apps) {
    if (!screens(*app)) continue;
    std::vector<std::pair<double, State *>> timed;
    std::size_t screened = 0;
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin != "combination" || !s.problem.empty()) continue;
      ++screened;
      const TuneRow *found = nullptr;
      for (int d = 0; d <= static_cast<int>(cfg_.worker_devices.size()) && !found; ++d)
        found =
            ledger_->find("screen", app->name, id, shape_label(*s.probe), cfg_.train[0].name, d);
      const std::optional<TimingStats> t =
          found && found->row.ok() ? ledger_->objective_time(*found) : std::nullopt;
      if (!t) {
        s.problem = !found ? "not timed"
                    : found->row.ok()
                        ? "no accurate baseline on device " + std::to_string(found->device)
                        : std::string(status_name(found->row.status)) + ": " + found->row.reason;
        s.pruned_at = "screen";
        continue;
      }
      timed.push_back({t->median, &s});
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    for (std::size_t i = cfg_.max_combinations; i < timed.size(); ++i) {
      char us[32];
      std::snprintf(us, sizeof us, "%.1f", timed[i].first / 1e3);
      timed[i].second->problem = "not among the " + std::to_string(cfg_.max_combinations) +
                                 " fastest of the " + std::to_string(screened) +
                                 " combinations timed at the probe shape (" + us + " us)";
      timed[i].second->pruned_at = "screen";
    }
  }
}

void Tuner::judge_faults(const std::string &stage) {
  for (const TuneRow &t : ledger_->rows()) {
    if (t.stage != stage || !t.row.device_faulted()) continue;
    auto a = states_.find(t.row.app);
    if (a == states_.end()) continue;
    auto s = a->second.find(variant_id(t.row));
    if (s == a->second.end() || !s->second.problem.empty()) continue;
    s->second.problem = "device_fault at " + wg_label(t.row.wg_x, t.row.wg_y, t.row.vec, t.row.py) +
                        " on " + t.row.input_name + ": " + t.row.reason;
    s->second.pruned_at = stage;
  }
}

// Whether the screen times an app's combinations: only where it has more than it may try.
bool Tuner::screens(const AppDescriptor &app) {
  std::size_t combinations = 0;
  for (const auto &[id, s] : states_[app.name])
    combinations += s.origin == "combination" && s.problem.empty();
  return combinations > cfg_.max_combinations;
}

// 1. Atoms: each axis value alone, and the two baselines whatever the lists say (speedups are
// against them).
void Tuner::add_atoms(const TuneSpace &space) {
  for (auto *app : cfg_.apps)
    for (const auto &[group, donors] : space.values) {
      // A kernel axis only some apps have (bilateral's loop) is not searched for the others.
      if (group.is_kernel() && !kernel_axes()[group.kernel_axis()].applies_to(*app)) continue;
      for (const auto &donor : donors)
        add(*app, with_group(base_, group, donor), std::string("atom:") + group_name(group));
    }
  for (auto *app : cfg_.apps) {
    add(*app, base_, "atom:input");
    if (!paraprox_.load_path().reads_image) add(*app, paraprox_, "atom:load");
  }
}

// 3. Combinations of the groups' fronts, predicted from their atoms.
void Tuner::add_combinations() {
  for (auto *app : cfg_.apps) {
    auto &m = states_[app->name];
    const auto b = m.find(base_id_);
    if (b == m.end() || !b->second.best) continue;
    std::vector<AtomStanding> standings;
    for (auto &[id, s] : m)
      if (s.origin.rfind("atom:", 0) == 0 && s.problem.empty() && s.best) {
        AxisGroup g = AxisGroup::kInput;
        for (AxisGroup c : all_groups())
          if (s.origin == "atom:" + group_name(c)) g = c;
        standings.push_back({g, s.v, s.best_time, s.probe_error});
      }
    const std::size_t limit =
        cfg_.screen_combinations ? cfg_.screen_combinations : cfg_.max_combinations;
    for (const auto &c :
         propose_combinations(standings, b->second.best_time, cfg_.budgets.back(), limit))
      if (State *s = add(*app, c.variant, "combination")) s->proposal = c;
  }
}

// 4. Each survivor's best shape on every training input, where the probe did not run it.
Tuner::Plan Tuner::confirm_plan() {
  Plan plan;
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name]) {
      if (!s.problem.empty() || !s.best) continue;
      std::vector<WorkGroup> shapes;
      for (const auto &[wg, stage] : TuneReport(*this).point_shapes(*app, id, s))
        if (stage == "confirm") shapes.push_back(wg);
      if (!shapes.empty()) plan.apps[app->name][id] = {s.v, shapes};
    }
  return plan;
}

}  // namespace kperf
