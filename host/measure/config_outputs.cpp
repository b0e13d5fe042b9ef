// The output of one configuration: its error against the truth (measured on the device where it
// can, else downloaded; several launches for racing variants), --verify against the CPU model
// of the scheme, and --save-outputs.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kernel_axes.hpp"
#include "metrics.hpp"
#include "runner_internal.hpp"

namespace kperf {

namespace fs = std::filesystem;

namespace {

constexpr const char* kGuardsOverwritten =
    "kernel wrote outside its output buffer (canary band overwritten)";

}  // namespace

// Result keys become file names: '/' and ':' are not welcome there.
std::string key_to_filename(const std::string& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (key.compare(i, 3, " > ") == 0) {  // a chain's stages
      out += "+";
      i += 2;
    } else {
      out += c == '/' ? std::string("__") : c == ':' ? std::string("-") : std::string(1, c);
    }
  }
  return out + ".npy";
}

std::vector<float> Runner::download_output(Workload& w, const Variant& v, ResultRow& row,
                                           const SampleLaunches& sample, bool rerun) {
  PhaseTimer timer(phase_s_, "download");
  auto& q = env_.queue();
  if (rerun) rerun_sample(w, v, sample);
  const StorageType& out_type = *v.precision_info().out;
  const std::size_t bytes = w.buf->out.bytes(out_type);
  const std::size_t n = static_cast<std::size_t>(w.width) * w.height;
  const int final_buffer = sample.final_buffer();
  // Other buffers first, so the final one is what the staging memory holds at the end.
  for (int b : sample.ping_pong() ? std::vector<int>{1 - final_buffer, final_buffer}
                                  : std::vector<int>{0}) {
    unsigned char* copy = staging(bytes);
    q.enqueueReadBuffer(w.buf->out.parent(b), CL_TRUE, 0, bytes, copy);
    if (!w.buf->out.guards_intact(copy, out_type)) {
      row.status = "run_failed";
      row.reason = kGuardsOverwritten;
      return {};
    }
  }
  std::vector<float> values(n);
  out_type.decode(staging(bytes) + w.buf->out.guard_bytes(), values.data(), n);
  return values;
}

std::optional<ErrorMetrics> Runner::measure_once(Workload& w, const Variant& v, ResultRow& row,
                                                 const SampleLaunches& sample, bool rerun,
                                                 std::vector<float>& output) {
  // Measured where the output is: on the device when it can (nothing downloaded but the canary
  // bands), else on the host. --verify and --save-outputs need the output on the host anyway.
  const bool on_device = w.device_truth && !cfg_.verify && cfg_.save_outputs_dir.empty();
  if (!on_device) {
    output = download_output(w, v, row, sample, rerun);
    if (output.empty()) return std::nullopt;
    PhaseTimer timer(phase_s_, "metrics");
    return compute_errors(w.truth.data, output, w.width, w.height, cfg_.ssim);
  }
  const StorageType& out_type = *v.precision_info().out;
  {
    PhaseTimer timer(phase_s_, "download");
    auto& q = env_.queue();
    if (rerun) rerun_sample(w, v, sample);
    for (int b : sample.ping_pong() ? std::vector<int>{0, 1} : std::vector<int>{0})
      if (!w.buf->out.guards_intact_on_device(q, b, out_type)) {
        row.status = "run_failed";
        row.reason = kGuardsOverwritten;
        return std::nullopt;
      }
  }
  PhaseTimer timer(phase_s_, "metrics");
  return device_metrics_->compute(w.buf->out.view(out_type, sample.final_buffer()), out_type,
                                  cfg_.ssim);
}

bool Runner::measure_errors(Workload& w, const Variant& v, ResultRow& row,
                            const SampleLaunches& sample, bool others_ran,
                            std::vector<float>& output) {
  // Hotspot's output after timing has run every sample on, and under --rounds other
  // configurations have written the buffer since: measure a fresh run.
  // Where the input is finite, an output that is non-finite where the truth is finite was never
  // written, or computed from values never loaded: not a measurement.
  auto finite_where_truth_is = [&](const ErrorMetrics& e) {
    if (!w.input_finite || e.nonfinite <= w.truth_nonfinite) return true;
    row.status = "run_failed";
    row.reason = std::to_string(e.nonfinite - w.truth_nonfinite) + " of " +
                 std::to_string(static_cast<long long>(w.width) * w.height) +
                 " outputs are non-finite where the accurate output is finite (never written, "
                 "computed from values never loaded, or overflowed)";
    return false;
  };
  const std::optional<ErrorMetrics> first =
      measure_once(w, v, row, sample, sample.ping_pong() || others_ran, output);
  if (!first || !finite_where_truth_is(*first)) return false;
  row.error = *first;
  if (races(v)) {
    // A race by design: outputs may differ from launch to launch. Keep the primary error of
    // several independent launches, each from a freshly poisoned output buffer.
    constexpr int kRelaxedDownloads = 5;
    row.error_reps.push_back(row.error->value(w.app->primary_metric));
    for (int i = 1; i < kRelaxedDownloads; ++i) {
      const std::optional<ErrorMetrics> again = measure_once(w, v, row, sample, true, output);
      if (!again || !finite_where_truth_is(*again)) return false;
      row.error_reps.push_back(again->value(w.app->primary_metric));
    }
  }
  return true;
}

void Runner::verify_against_model(const Workload& w, const Variant& v, ResultRow& row,
                                  const std::vector<float>& output) {
  PhaseTimer timer(phase_s_, "verify");
  const GridD model =
      model_run(*w.app, v, {row.wg_x, row.wg_y, row.vec, row.py}, w.input_d,
                w.power_d ? &*w.power_d : nullptr, w.app->traits.iterated ? cfg_.iterations : 1,
                cfg_.params, model_evaluator(*w.app));
  double worst = 0;
  for (std::size_t i = 0; i < output.size(); ++i)
    if (std::isfinite(model.data[i]))
      worst = std::max(worst, std::fabs(model.data[i] - static_cast<double>(output[i])));
  row.model_max_abs = worst;
}

void Runner::save_output(const Workload& w, ResultRow& row, std::vector<float> output) {
  PhaseTimer timer(phase_s_, "save_outputs");
  Grid g(w.width, w.height);
  g.data = std::move(output);
  const fs::path file = fs::path(cfg_.save_outputs_dir) / key_to_filename(row.key);
  try {
    if (fault("save"))
      throw std::runtime_error(file.string() + ": injected fault (KPERF_FAULT=save)");
    write_npy(file.string(), g);
    row.output_file = file.string();
  } catch (const std::exception& e) {
    // The measurement stands; the row says its output could not be kept.
    row.status = "host_error";
    row.reason = std::string("--save-outputs: ") + e.what();
  }
}

}  // namespace kperf
