// The benchmark runner's sweep: inputs x apps x variants x launch shapes, each configuration a
// chain of one through the measuring core, every outcome (failures too) a result row journaled
// before it is handed on. One configuration's path is in runner_config.cpp.
#include "runner.hpp"

#include <algorithm>
#include <cstdio>

#include "compile_workers.hpp"
#include "fault_journal.hpp"
#include "injected_faults.hpp"
#include "phases.hpp"
#include "runner_internal.hpp"

namespace kperf {

namespace {

std::atomic<long> workloads_started{0};

// Whether the run's selection (RunConfig::only) accepts this configuration.
bool selected(const RunConfig& cfg, const AppDescriptor& app, const Variant& v,
              const WorkGroup& wg) {
  return !cfg.only || cfg.only(app, v, wg);
}

// The core's options: the run's, the outputs read back where --verify or --save-outputs needs
// them (CoreOptions' members in their order).
CoreOptions core_options(const RunConfig& c) {
  return {c.kernel_root,
          c.extra_build_options,
          c.params,
          c.warmup,
          c.reps,
          c.max_cv,
          c.max_reps,
          c.rounds > 1,
          c.cold && !c.dry_run,
          c.ssim,
          c.metrics_on,
          c.verify || !c.save_outputs_dir.empty(),
          false,
          c.residency};
}

}  // namespace

Runner::Runner(ClEnv& env, RunConfig config)
    : env_(env),
      cfg_(std::move(config)),
      core_(env, core_options(cfg_)),
      truths_(&env, cfg_.kernel_root, cfg_.params, cfg_.extra_build_options, cfg_.truth_cache),
      copies_(env, core_),
      energy_(env, cfg_.energy, cfg_.energy_requested, cfg_.energy_options,
              cfg_.energy_absent_reason) {}

void Runner::tick(const std::string& label) {
  ++done_;
  if (!cfg_.progress) return;
  const double elapsed = now_s() - start_s_;
  const double eta =
      done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0;
  const int width = 28;
  const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
  std::fprintf(stderr, "\r%s[%s%s] %zu/%zu  %02d:%02d elapsed  ETA %02d:%02d  %-48.48s",
               cfg_.progress_label.c_str(),
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), '.').c_str(), done_, total_,
               static_cast<int>(elapsed) / 60, static_cast<int>(elapsed) % 60,
               static_cast<int>(eta) / 60, static_cast<int>(eta) % 60, label.c_str());
  if (done_ == total_) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

nlohmann::ordered_json Runner::phases_json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  std::map<std::string, double> all = phase_s_;
  for (const auto& [name, s] : core_.phases()) all[name] += s;
  all["compile"] += truths_.compile_seconds();
  for (const char* name : {"compile", "reference", "upload", "timed_launches", "transfers",
                           "download", "metrics", "verify", "save_outputs", "copy_bandwidth"}) {
    const auto it = all.find(name);
    out[name] = it == all.end() ? 0.0 : it->second;
  }
  return out;
}

void Runner::prebuild(const std::vector<std::pair<std::string, std::string>>& jobs) {
  PhaseTimer timer(phase_s_, "compile");
  const double start = now_s();
  const WorkerCompile done = compile_in_workers(env_, cfg_.compile_worker_exe, jobs);
  worker_s_ += now_s() - start;
  worker_processes_ = std::max(worker_processes_, done.processes);
  worker_programs_ += done.programs;
  worker_starts_ += done.starts;
  worker_batches_ += done.batches;
  // A compiler crash here would be no configuration's: after one (an earlier measuring process
  // died in this prebuild), and for a program a compile worker died building, each program is
  // built in its configuration's journaled set-up, where a crash is that configuration's fault.
  for (std::size_t i : done.crashed) crashed_builds_.insert(jobs[i]);
  if (journal_skip_prebuild()) return;
  std::vector<std::pair<std::string, std::string>> rest;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!crashed_builds_.count(jobs[i]) &&
        std::find(done.timed_out.begin(), done.timed_out.end(), i) == done.timed_out.end())
      rest.push_back(jobs[i]);
  journal_begin_prebuild(rest.size());
  env_.prebuild(rest, build_threads(env_.info()));
  journal_end();
}

Grid Runner::load_own_inputs(const AppDescriptor& app, std::optional<std::pair<int, int>> size,
                             std::optional<Grid>& power, std::string& name) const {
  Grid input;
  if (!cfg_.temp_path.empty()) {
    // Files, read once at the first size when one is given.
    auto [first, second] = read_input_pair(cfg_.temp_path, cfg_.power_path, size);
    input = std::move(first);
    if (app.traits.second_input) power = std::move(second);
    name = file_stem(cfg_.temp_path);
  } else {
    const auto [width, height] = size.value_or(std::make_pair(512, 512));
    Grid first(width, height), second(width, height);
    app.traits.make_own_inputs(width, height, first.data, second.data);
    input = std::move(first);
    if (app.traits.second_input) power = std::move(second);
    name = std::string("synthetic-") + app.traits.own_inputs;
  }
  const std::size_t bad = count_nonfinite(input.data) + (power ? count_nonfinite(power->data) : 0);
  if (bad)
    std::fprintf(stderr, "warning: %s input has %zu non-finite values; metrics skip them\n",
                 app.name.c_str(), bad);
  return input;
}

bool Runner::still_to_measure(const AppDescriptor& app, const Variant& v, WorkGroup wg) const {
  if (cfg_.skip_keys.empty()) return true;
  if (!app.takes_images() || cfg_.sizes.empty()) return false;  // sizes known once read
  for (const auto& [width, height] : cfg_.sizes)
    for (const auto& src : cfg_.image_inputs)
      if (!cfg_.skip_keys.count(config_key(app, v, wg, src.name, width, height))) return true;
  return false;
}

void Runner::run(const std::function<void(ResultRow)>& raw_sink) {
  start_s_ = now_s();
  raw_sink_ = &raw_sink;
  // Every row is journaled before it is handed on: a restarted process resumes after it.
  const std::function<void(ResultRow)> sink = [&](ResultRow row) {
    if (!cfg_.dry_run) journal_row(journal_json(row));
    raw_sink(std::move(row));
    if (!cfg_.dry_run) injected_stop_after_row();  // after the row's checkpoint, if any
  };
  std::size_t image_apps = 0;
  for (auto* a : cfg_.apps) image_apps += a->takes_images() ? 1 : 0;
  std::vector<std::optional<std::pair<int, int>>> sizes(cfg_.sizes.begin(), cfg_.sizes.end());
  if (sizes.empty()) sizes.push_back(std::nullopt);
  // Input files for the apps with their own inputs are read once; else made at every size (or
  // once, at own_input_size).
  const bool own_once = !cfg_.temp_path.empty() || cfg_.own_input_size.has_value();
  total_ = 0;
  for (auto* a : cfg_.apps) {
    std::size_t count = 0;
    for (const auto& v : cfg_.variants)
      for (const auto& wg : cfg_.wgs) count += selected(cfg_, *a, v, wg) ? 1 : 0;
    total_ += count * (a->takes_images() ? cfg_.image_inputs.size() * sizes.size()
                                         : (own_once ? 1 : sizes.size()));
  }
  if (!cfg_.dry_run && journal_stop().empty()) {
    // Every program of the run at once (build options do not depend on the input), so the
    // worker processes start once. With a resumed file, the programs some input still needs
    // (where the inputs' sizes are known before they are read); each workload builds the rest.
    std::vector<std::pair<std::string, std::string>> jobs;
    for (auto* app : cfg_.apps)
      for (const auto& v : cfg_.variants)
        for (const auto& wg : cfg_.wgs)
          if (selected(cfg_, *app, v, wg) && still_to_measure(*app, v, wg))
            for (auto& job : core_.programs({{app, v, wg}})) jobs.push_back(std::move(job));
    prebuild(jobs);
  }
  for (const auto& size : sizes) {
    for (const auto& src : cfg_.image_inputs) {
      if (image_apps == 0 || interrupted_) break;
      Grid grid = load_image_source(src, size);
      const std::size_t bad = count_nonfinite(grid.data);
      if (bad && cfg_.input_warnings)
        std::fprintf(stderr, "warning: input %s has %zu non-finite values; metrics skip them\n",
                     src.name.c_str(), bad);
      for (auto* app : cfg_.apps) {
        if (!app->takes_images() || interrupted_) continue;
        Workload w{bind_input({app}, src.name, grid, std::nullopt,
                              app->traits.iterated ? cfg_.iterations : 1)};
        run_workload(w, sink);
      }
    }
    for (auto* app : cfg_.apps) {
      if (app->takes_images() || interrupted_ || (own_once && &size != &sizes.front())) continue;
      std::optional<Grid> power;
      std::string name;
      Grid input =
          load_own_inputs(*app, cfg_.own_input_size ? cfg_.own_input_size : size, power, name);
      Workload w{bind_input({app}, name, std::move(input), std::move(power),
                            app->traits.iterated ? cfg_.iterations : 1)};
      run_workload(w, sink);
    }
  }
}

void Runner::run_workload(Workload& w, const std::function<void(ResultRow)>& sink) {
  const AppDescriptor& app = *w.apps.front();
  // Skip everything (and the reference) when all keys are already in a resumed file; stop before
  // the reference when the journal says to and a configuration is still to be measured.
  bool any_left = false, to_measure = false;
  std::size_t selected_configs = 0;
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs)
      if (selected(cfg_, app, v, wg)) {
        ++selected_configs;
        const std::string key = config_key(app, v, wg, w.name, w.width, w.height);
        if (cfg_.skip_keys.count(key)) continue;
        any_left = true;
        to_measure = to_measure || !journaled_fault(key, cfg_.journal_fields);
      }
  if (!any_left) {
    done_ += selected_configs;
    return;
  }
  if (!cfg_.dry_run && to_measure && !journal_stop().empty()) {
    interrupted_ = stopped_ = true;
    return;
  }
  if (cfg_.dry_run) {
    for_each_pending(w, [&](const Variant& v, WorkGroup wg) {
      ResultRow row = describe_row(app, v, wg, w.name, w.width, w.height, cfg_.iterations);
      const auto verdict = core_.static_check(w, {{&app, v, wg}});
      row.status = verdict ? verdict->second.status : Status::kPlanned;
      if (verdict) row.reason = verdict->second.reason;
      const std::string key = row.key;
      sink(std::move(row));
      tick(key);
    });
    return;
  }
  if (app.traits.size_caveat) {
    w.note = app.traits.size_caveat(w.width, w.height);
    if (!w.note.empty())
      std::fprintf(stderr, "warning: %s: %s\n", app.name.c_str(), w.note.c_str());
  }
  if (fault_at("workload", workloads_started))
    throw InputError(w.name + ": injected fault (KPERF_FAULT=workload)");
  {
    PhaseTimer timer(phase_s_, "reference");
    if (!journaled_truth(truths_, w, workload_json(w)))
      throw DeviceLost(app.name + " on " + w.name + ": " + w.truth_problem);
  }
  core_.bind(w);
  // Compile every program this workload needs up front, in parallel; timing stays sequential.
  std::vector<std::pair<std::string, std::string>> jobs;
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs)
      if (selected(cfg_, app, v, wg) &&
          !cfg_.skip_keys.count(config_key(app, v, wg, w.name, w.width, w.height)) &&
          !core_.static_check(w, {{&app, v, wg}}))
        for (auto& job : core_.programs({{&app, v, wg}})) jobs.push_back(std::move(job));
  prebuild(jobs);
  try {
    if (cfg_.rounds > 1)
      run_in_rounds(w, sink);
    else
      for_each_pending(w, [&](const Variant& v, WorkGroup wg) {
        ResultRow row = run_config(w, v, wg);
        const std::string key = row.key, reason = row.reason;
        sink(std::move(row));
        tick(key);
        if (core_.lost()) throw DeviceLost(key + ": " + reason);
      });
  } catch (const Abandoned&) {
    interrupted_ = true;
  } catch (const Stopped&) {
    interrupted_ = stopped_ = true;
  }
}

nlohmann::ordered_json Runner::journal_json(const ResultRow& row) const {
  nlohmann::ordered_json j = to_json(row);
  for (auto it = cfg_.journal_fields.begin(); it != cfg_.journal_fields.end(); ++it)
    j[it.key()] = it.value();
  return j;
}

nlohmann::ordered_json Runner::workload_json(const Workload& w) const {
  nlohmann::ordered_json j = cfg_.journal_fields;
  j["app"] = w.apps.front()->name;
  j["input"] = w.name;
  j["width"] = w.width;
  j["height"] = w.height;
  return j;
}

void Runner::for_each_pending(const Workload& w,
                              const std::function<void(const Variant&, WorkGroup)>& visit) {
  const AppDescriptor& app = *w.apps.front();
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs) {
      if (!selected(cfg_, app, v, wg)) continue;
      if (interrupt_requested()) throw Abandoned{};
      const std::string key = config_key(app, v, wg, w.name, w.width, w.height);
      if (cfg_.skip_keys.count(key)) {
        tick(key);
        continue;
      }
      if (!cfg_.dry_run) {
        // A configuration that faulted an earlier process is not launched again.
        if (const auto fault = journaled_fault(key, cfg_.journal_fields)) {
          (*raw_sink_)(row_from_json(*fault));
          tick(key);
          continue;
        }
        if (!journal_stop().empty()) throw Stopped{};
      }
      visit(v, wg);
    }
}

}  // namespace kperf
