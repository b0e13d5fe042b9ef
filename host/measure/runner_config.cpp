// One configuration through the runner: a chain of one set up, timed and measured by the core,
// under the fault journal; --rounds' interleaved timing; then the runner's own additions (energy,
// transfers, --verify, --save-outputs, the bandwidth) and the row.
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <tuple>

#include "fault_journal.hpp"
#include "injected_faults.hpp"
#include "kernel_axes.hpp"
#include "phases.hpp"
#include "runner_internal.hpp"
#include "structural_axes.hpp"
#include "transfers.hpp"

namespace kperf {

namespace fs = std::filesystem;

ResultRow describe_row(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input_name, int width, int height, int iterations) {
  ResultRow row;
  row.app = app.name;
  row.scheme = v.canonical();
  row.skip = v.skip;
  row.recon = recon_name(v.recon);
  set_structural_fields(v, row);
  for (std::size_t i = 0; i < kernel_axes().size(); ++i) {
    const KernelAxis& axis = kernel_axes()[i];
    if (axis.applies_to(app)) row.kernel_axes[axis.field] = axis.values[v.kernel_value(i)].name;
  }
  row.axes = v.axes_key();
  row.variant = v.id();
  row.family = v.family();
  row.wg_x = wg.x;
  row.wg_y = wg.y;
  row.vec = wg.vec;
  row.py = wg.py;
  row.input_name = input_name;
  row.width = width;
  row.height = height;
  row.iterations = app.traits.iterated ? effective_iterations(iterations, v.iterations_skip) : 1;
  row.primary_metric = metric_name(app.primary_metric);
  row.key = config_key(app, v, wg, input_name, width, height);
  return row;
}

void fill_row(const Measurement& m, ResultRow& row) {
  std::tie(row.status, row.reason, row.samples_ns, row.time, row.round_start_ns, row.stop_reason) =
      std::tie(m.status, m.reason, m.samples_ns, m.time, m.round_start_ns, m.stop_reason);
  if (m.stages.empty()) return;
  const StageMeasurement& s = m.stages.front();
  if (!s.build_log.empty()) row.build_log = s.build_log;
  if (s.kernel_info) row.kernel_info = s.kernel_info;
  row.error = s.errors;
  row.error_reps = s.error_reps;
  if (!row.ok()) {
    row.samples_ns.clear();
    row.round_start_ns.clear();
    row.time.reset();
  }
}

bool Runner::prepare_config(Workload& w, const Variant& v, WorkGroup wg, Prepared& p,
                            ResultRow& row) {
  const AppDescriptor& app = *w.apps.front();
  row = describe_row(app, v, wg, w.name, w.width, w.height, cfg_.iterations);
  row.note = w.note;
  row.reference = w.references.empty() ? std::string() : w.references.front();
  p.key = row.key;
  p.fault_stage = cfg_.journal_fields.value("stage", std::string());
  journal_begin(journal_json(row), "build and set-up");
  const bool ready = core_.prepare(w, {{&app, v, wg}}, p);
  fill_row(p.m, row);
  return ready;
}

ResultRow Runner::run_config(Workload& w, const Variant& v, WorkGroup wg) {
  Prepared p;
  ResultRow row;
  const bool ready = prepare_config(w, v, wg, p, row);
  if (ready && !core_.lost()) {
    journal_begin(journal_json(row), "timed launches");
    core_.attempt(p, [&] { core_.time(w, p, cfg_.reps); });
    fill_row(p.m, row);
    if (!core_.lost()) finish_config(w, p, row);
  }
  journal_end();
  return row;
}

void Runner::finish_config(Workload& w, Prepared& p, ResultRow& row) {
  if (!row.ok()) return;
  journal_begin(journal_json(row), "output check");
  const Variant& v = p.chain.front().variant;
  const bool rerun = p.launches.front().sample.ping_pong() || cfg_.rounds > 1;
  // Hotspot's output after timing has run every sample on, and under --rounds other
  // configurations have written the buffer since: its outputs come from a fresh run.
  core_.attempt(p, [&] {
    if (energy_.requested())
      energy_.measure(p, static_cast<double>(w.width) * w.height, row, phase_s_);
    if (cfg_.transfers) {
      PhaseTimer timer(phase_s_, "transfers");
      time_transfers(env_, core_, w, p, cfg_.reps, row);
    }
    if (!core_.measure_outputs(w, p, true, rerun)) return;
    std::vector<float>& output = p.m.stages.front().output;
    if (cfg_.verify) verify_against_model(w, v, row, output);
    if (!cfg_.save_outputs_dir.empty()) save_output(w, row, std::move(output));
  });
  // The row's own failures (a file that could not be saved) stand beside the measurement's.
  const Status own = row.status;
  const std::string own_reason = row.reason;
  fill_row(p.m, row);
  if (row.ok() && own != Status::kOk) {
    row.status = own;
    row.reason = own_reason;
  }
  if (row.ok()) add_bandwidth(w, v, p.chain.front().wg, row);
}

// Under --rounds a drift of the device's speed during the run (clocks, temperature, neighbours
// on the host) reaches every configuration of the workload alike: each round takes a share of
// --reps samples from every configuration, the order reversed every other round so that a
// drift within a round cancels too. A configuration is written once all its rounds ran; an
// interrupt leaves the workload's unfinished configurations for --resume.
void Runner::run_in_rounds(Workload& w, const std::function<void(ResultRow)>& sink) {
  struct Ready {
    Prepared p;
    ResultRow row;
  };
  std::deque<Ready> ready;
  // A configuration that faults the device is written at once and ends this process's device
  // work; the others of the workload are measured again by the next process.
  auto end_if_lost = [&](Ready& r) {
    journal_end();
    if (!core_.lost()) return;
    fill_row(r.p.m, r.row);
    const std::string key = r.row.key, reason = r.row.reason;
    sink(std::move(r.row));
    throw DeviceLost(key + ": " + reason);
  };
  for_each_pending(w, [&](const Variant& v, WorkGroup wg) {
    Ready& r = ready.emplace_back();
    const bool prepared = prepare_config(w, v, wg, r.p, r.row);
    end_if_lost(r);
    if (prepared) return;
    const std::string key = r.row.key;
    sink(std::move(r.row));
    tick(key);
    ready.pop_back();
  });
  auto share_end = [&](long long round) { return cfg_.reps * round / cfg_.rounds; };
  for (int round = 0; round < cfg_.rounds; ++round) {
    const int samples = static_cast<int>(share_end(round + 1) - share_end(round));
    auto time_round = [&](Ready& r) {
      if (!r.p.m.ok()) return;
      fill_row(r.p.m, r.row);
      journal_begin(journal_json(r.row), "timed launches");
      core_.attempt(r.p, [&] { core_.time(w, r.p, samples); });
      end_if_lost(r);
    };
    if (round % 2 == 0)
      std::for_each(ready.begin(), ready.end(), time_round);
    else
      std::for_each(ready.rbegin(), ready.rend(), time_round);
  }
  for (Ready& r : ready) {
    if (interrupt_requested()) throw Abandoned{};
    fill_row(r.p.m, r.row);
    finish_config(w, r.p, r.row);
    end_if_lost(r);
    const std::string key = r.row.key;
    sink(std::move(r.row));
    tick(key);
  }
}

// Bandwidth against the byte model and the copy kernel's, for an ok row.
void Runner::add_bandwidth(const Workload& w, const Variant& v, WorkGroup wg, ResultRow& row) {
  const AppDescriptor& app = *w.apps.front();
  const double n = static_cast<double>(w.width) * w.height;
  const double read = distinct_elements_read(v, app.radius, wg, w.width, w.height);
  // Global bytes at the stored sizes: the input (and hotspot's power) read, the output written.
  const double in_bytes = static_cast<double>(v.precision_info().in->bytes);
  const double out_bytes = static_cast<double>(v.precision_info().out->bytes);
  row.bytes_model =
      ((read + (app.traits.second_input ? n : 0.0)) * in_bytes + n * out_bytes) * row.iterations;
  row.gbps = row.time->median > 0 ? row.bytes_model / row.time->median : 0;
  {
    PhaseTimer timer(phase_s_, "copy_bandwidth");
    row.copy_gbps = copies_.gbps_for(w.width, w.height);
  }
  row.roofline = row.copy_gbps > 0 ? row.gbps / row.copy_gbps : 0;
}

void Runner::verify_against_model(const Workload& w, const Variant& v, ResultRow& row,
                                  const std::vector<float>& output) {
  PhaseTimer timer(phase_s_, "verify");
  const AppDescriptor& app = *w.apps.front();
  const GridD input = to_double(w.input.data, w.width, w.height);
  std::optional<GridD> power;
  if (w.power) power = to_double(w.power->data, w.width, w.height);
  const GridD model =
      model_run(app, v, {row.wg_x, row.wg_y, row.vec, row.py}, input, power ? &*power : nullptr,
                app.traits.iterated ? cfg_.iterations : 1, cfg_.params, truths_.evaluator(app));
  double worst = 0;
  for (std::size_t i = 0; i < output.size(); ++i)
    if (std::isfinite(model.data[i]))
      worst = std::max(worst, std::fabs(model.data[i] - static_cast<double>(output[i])));
  row.model_max_abs = worst;
}

void Runner::save_output(const Workload& w, ResultRow& row, std::vector<float> output) {
  PhaseTimer timer(phase_s_, "save_outputs");
  const fs::path file = fs::path(cfg_.save_outputs_dir) / key_to_filename(row.key);
  try {
    write_output_npy(file.string(), std::move(output), w.width, w.height);
    row.output_file = file.string();
  } catch (const std::exception& e) {
    // The measurement stands; the row says its output could not be kept.
    row.status = Status::kHostError;
    row.reason = std::string("--save-outputs: ") + e.what();
  }
}

}  // namespace kperf
