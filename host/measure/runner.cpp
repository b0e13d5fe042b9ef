// The benchmark runner's loop: inputs x apps x variants x work-groups, each configuration timed
// with profiling events, its output checked, every outcome (failures too) a result row. One
// configuration's steps are in runner_config.cpp, a workload's inputs and truth in
// runner_workload.cpp.
#include "runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <new>
#include <thread>

#include "compile_workers.hpp"
#include "device_metrics.hpp"
#include "fault_journal.hpp"
#include "kernel_axes.hpp"
#include "metrics.hpp"
#include "runner_internal.hpp"
#include "stats.hpp"
#include "storage.hpp"
#include "structural_axes.hpp"
#include "synthetic.hpp"

namespace kperf {

namespace fs = std::filesystem;

std::atomic<bool>& interrupt_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

bool fault(const std::string& kind) {
  static const std::string spec = [] {
    const char* env = std::getenv("KPERF_FAULT");
    return env ? std::string(env) : std::string();
  }();
  return !spec.empty() && spec.rfind(kind, 0) == 0;
}

bool fault_at(const std::string& kind, std::atomic<long>& count) {
  if (!fault(kind + ":")) return false;
  const long at = std::atol(std::getenv("KPERF_FAULT") + kind.size() + 1);
  return ++count == at;
}

std::optional<std::string> fault_argument(const std::string& kind) {
  if (!fault(kind + ":")) return std::nullopt;
  return std::string(std::getenv("KPERF_FAULT") + kind.size() + 1);
}

bool fault_hits(const std::string& kind, const std::string& key, const std::string& stage) {
  const auto argument = fault_argument(kind);
  if (!argument) return false;
  // TEXT, then the qualifiers, each after a ';' (keys hold no ';').
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = argument->find(';', start)) != std::string::npos; start = end + 1)
    parts.push_back(argument->substr(start, end - start));
  parts.push_back(argument->substr(start));
  if (key.find(parts[0]) == std::string::npos) return false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& q = parts[i];
    if (q.rfind("stage=", 0) == 0) {
      if (q.substr(6) != stage) return false;
    } else if (q.rfind("input=", 0) == 0) {
      // A key names its input between slashes, before the size (results.hpp, pipeline.hpp).
      if (key.find("/" + q.substr(6) + "/") == std::string::npos) return false;
    } else {
      throw std::invalid_argument("KPERF_FAULT: unknown qualifier '" + q +
                                  "' (valid: stage=NAME, input=NAME)");
    }
  }
  return true;
}

void injected_stop_after_row() {
  static std::atomic<long> rows{0};
  const int sig = fault("interrupt-after:") ? SIGINT
                  : fault("term-after:")    ? SIGTERM
                  : fault("kill-after:")    ? SIGKILL
                                            : 0;
  if (sig == 0) return;
  const long after = std::atol(std::strchr(std::getenv("KPERF_FAULT"), ':') + 1);
  if (++rows != after) return;
  // SIGKILL: the whole command at once, as `kill -9` of its process group, with no chance to
  // write anything more. SIGINT and SIGTERM: through the supervisor's handler, which forwards them
  // here; raised here too, so that this process has seen it before it starts the next
  // configuration, whenever the forwarded one arrives.
  if (supervised()) ::kill(::getppid(), sig);
  std::raise(sig);
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

namespace {

std::atomic<long> workloads_started{0};

}  // namespace

std::atomic<long> configurations_timed{0};

std::string config_key(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input, int width, int height) {
  return make_key(app.name, v.canonical(), recon_name(v.recon), v.axes_key(), wg.x, wg.y, wg.vec,
                  wg.py, input, width, height);
}

std::size_t cold_flush_bytes(const DeviceInfo& dev) {
  // Larger than any last-level cache kperf targets (H100/H200 L2: 50-60 MB; NVIDIA reports a
  // few MB) and 4x what the device reports, within one allocation.
  const std::size_t bytes =
      std::max<std::size_t>(std::size_t{256} << 20, 4 * dev.global_mem_cache_size);
  return std::min<std::size_t>(bytes, dev.max_mem_alloc_size / 2) & ~std::size_t{3};
}

Runner::Runner(ClEnv& env, RunConfig config)
    : buffers_(std::make_unique<DeviceBuffers>()), env_(env), cfg_(std::move(config)) {
  if (cfg_.cold) {
    flush_bytes_ = cold_flush_bytes(env_.info());
    flush_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, flush_bytes_);
  }
  // Metrics on the device by default where the host would be the bottleneck (a GPU); on a CPU
  // device the host's separable SSIM costs less than the device's direct windows.
  const std::string& where = cfg_.metrics_on;
  if (where != "host") {
    const auto problem = DeviceMetrics::unsupported(env_.device());
    if (problem) {
      metrics_reason_ = *problem;
    } else if (where == "device" || env_.info().is_gpu()) {
      try {
        device_metrics_.emplace(env_, cfg_.kernel_root);
      } catch (const std::exception& e) {
        metrics_reason_ = std::string("metrics kernels did not build: ") + e.what();
        std::fprintf(stderr, "warning: %s; measuring on the host\n", metrics_reason_.c_str());
      }
    } else {
      metrics_reason_ = "a CPU device: the host's separable SSIM is cheaper";
    }
  } else {
    metrics_reason_ = "--metrics-on host";
  }
}

nlohmann::ordered_json Runner::metrics_json() const {
  nlohmann::ordered_json j = {{"on", device_metrics_ ? "device" : "host"}};
  if (!metrics_reason_.empty()) j["reason"] = metrics_reason_;
  return j;
}

Runner::~Runner() {
  if (!stage_ptr_) return;
  try {
    env_.queue().enqueueUnmapMemObject(stage_, stage_ptr_);
    env_.queue().finish();
  } catch (const cl::Error&) {
  }
}

unsigned char* Runner::staging(std::size_t bytes) {
  if (bytes > stage_bytes_) {
    if (stage_ptr_) env_.queue().enqueueUnmapMemObject(stage_, stage_ptr_);
    stage_ptr_ = nullptr;
    stage_bytes_ = 0;
    stage_ = cl::Buffer(env_.context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes);
    stage_ptr_ = static_cast<unsigned char*>(
        env_.queue().enqueueMapBuffer(stage_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
    stage_bytes_ = bytes;
  }
  return stage_ptr_;
}

const std::string& Runner::kernel_source(const std::string& file) {
  auto it = sources_.find(file);
  if (it == sources_.end())
    it = sources_.emplace(file, read_file((fs::path(cfg_.kernel_root) / "kernels" / file).string()))
             .first;
  return it->second;
}

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

double Runner::copy_gbps_for(int width, int height) {
  for (const auto& c : copies_)
    if (c.width == width && c.height == height) return std::max(c.scalar_gbps, c.vec4_gbps);
  CopyResult result{width, height, 0, 0, "ok"};
  result.cold = flush_bytes_ > 0;
  try {
    const std::size_t n = static_cast<std::size_t>(width) * height;
    cl::Program program = env_.build(kernel_source("copy.cl"), "-cl-std=CL1.2");
    cl::Buffer in(env_.context(), CL_MEM_READ_WRITE, n * sizeof(float));
    cl::Buffer out(env_.context(), CL_MEM_READ_WRITE, n * sizeof(float));
    // Values like an image's, not a constant: predictable data can inflate a copy's bandwidth
    // (clpeak's finding), and every byte the copies read is written first.
    const Grid pattern = make_synthetic_image("noise", width, height);
    env_.queue().enqueueWriteBuffer(in, CL_TRUE, 0, n * sizeof(float), pattern.data.data());
    // The copies are checked as well as timed: each output read back once equals the input.
    auto check_copy = [&](const char* name, std::size_t elements) {
      if (result.status != "ok" || elements == 0) return;
      std::vector<float> back(elements);
      env_.queue().enqueueReadBuffer(out, CL_TRUE, 0, elements * sizeof(float), back.data());
      if (std::memcmp(back.data(), pattern.data.data(), elements * sizeof(float)) != 0)
        result.status = std::string(name) + " wrote something other than its input";
    };
    // A power of two: n is at most INT_MAX (io.hpp), so the rounded-up launch stays within 2^31
    // work-items and copy.cl's int index cannot wrap.
    std::size_t local = 256;
    while (local > 1 && local > env_.info().max_work_group_size) local /= 2;
    auto measure = [&](const char* name, std::size_t items, double bytes) {
      if (items == 0) return 0.0;
      cl::Kernel k(program, name);
      k.setArg(0, in);
      k.setArg(1, out);
      k.setArg(2, static_cast<cl_int>(items));
      const cl::NDRange global((items + local - 1) / local * local);
      for (int i = 0; i < cfg_.warmup; ++i)
        env_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(local));
      std::vector<cl::Event> events(static_cast<std::size_t>(std::max(1, cfg_.reps)));
      for (auto& ev : events) {
        // --cold: timed as the kernels it is the roofline of are (time_samples), after a fill of
        // a buffer larger than the cache, so a cold kernel's bandwidth is not divided by a warm
        // copy's.
        if (flush_bytes_) {
          env_.queue().enqueueFillBuffer(flush_, static_cast<cl_uint>(++result.flushes), 0,
                                         flush_bytes_);
        }
        env_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(local), nullptr,
                                          &ev);
      }
      env_.queue().finish();
      std::vector<std::uint64_t> samples;
      for (auto& ev : events)
        samples.push_back(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                          ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      const double median = summarize(samples).median;
      return median > 0 ? bytes / median : 0.0;  // bytes per ns = GB/s
    };
    result.scalar_gbps = measure("copy_scalar", n, 2.0 * n * sizeof(float));
    check_copy("copy_scalar", n);
    result.vec4_gbps = measure("copy_vec4", n / 4, 2.0 * (n / 4) * 4 * sizeof(float));
    check_copy("copy_vec4", n / 4 * 4);
    const double halves = static_cast<double>(n / 8 * 8);
    result.half_gbps = measure("copy_half8", n / 8, 2.0 * halves * 2);
    result.half_convert_gbps = measure("copy_half8_convert", n / 8, 2.0 * halves * 2);
    result.half_to_float_gbps = measure("copy_half8_to_float", n / 8, halves * (2 + 4));
  } catch (const cl::Error& e) {
    result.status = describe(e);
  } catch (const BuildError& e) {
    result.status = std::string("copy kernel build failed: ") + e.what();
  }
  copies_.push_back(result);
  return std::max(result.scalar_gbps, result.vec4_gbps);
}

nlohmann::ordered_json Runner::copy_json() const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : copies_)
    list.push_back({{"width", c.width},
                    {"height", c.height},
                    {"scalar_gbps", c.scalar_gbps},
                    {"float4_gbps", c.vec4_gbps},
                    {"copy_gbps", std::max(c.scalar_gbps, c.vec4_gbps)},
                    {"half_gbps", c.half_gbps},
                    {"half_convert_gbps", c.half_convert_gbps},
                    {"half_to_float_gbps", c.half_to_float_gbps},
                    {"cold", c.cold},
                    {"flushes", c.flushes},
                    {"status", c.status}});
  return list;
}

nlohmann::ordered_json Runner::phases_json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const char* name : {"compile", "reference", "upload", "timed_launches", "transfers",
                           "download", "metrics", "verify", "save_outputs", "copy_bandwidth"}) {
    const auto it = phase_s_.find(name);
    out[name] = it == phase_s_.end() ? 0.0 : it->second;
  }
  return out;
}

double Runner::largest_copy_gbps() const {
  double best = 0;
  std::size_t largest = 0;
  for (const auto& c : copies_) {
    const std::size_t n = static_cast<std::size_t>(c.width) * c.height;
    if (n >= largest) largest = n, best = std::max(c.scalar_gbps, c.vec4_gbps);
  }
  return best;
}

void Runner::prebuild(const std::vector<std::pair<std::string, std::string>>& jobs) {
  PhaseTimer timer(phase_s_, "compile");
  const WorkerCompile done = compile_in_workers(env_, cfg_.compile_worker_exe, jobs);
  worker_processes_ = std::max(worker_processes_, done.processes);
  worker_programs_ += done.programs;
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

void Runner::load_own_inputs(Workload& w, std::optional<std::pair<int, int>> size) const {
  const AppDescriptor& app = *w.app;
  if (!cfg_.temp_path.empty()) {
    // Files, read once at the first size when one is given.
    auto [first, second] = read_input_pair(cfg_.temp_path, cfg_.power_path, size);
    w.input = std::move(first);
    if (app.traits.second_input) w.power = std::move(second);
    w.input_name = file_stem(cfg_.temp_path);
  } else {
    const auto [width, height] = size.value_or(std::make_pair(512, 512));
    Grid first(width, height), second(width, height);
    app.traits.make_own_inputs(width, height, first.data, second.data);
    w.input = std::move(first);
    if (app.traits.second_input) w.power = std::move(second);
    w.input_name = std::string("synthetic-") + app.traits.own_inputs;
  }
  const std::size_t bad =
      count_nonfinite(w.input.data) + (w.power ? count_nonfinite(w.power->data) : 0);
  if (bad)
    std::fprintf(stderr, "warning: %s input has %zu non-finite values; metrics skip them\n",
                 app.name.c_str(), bad);
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
  auto configs_of = [&](const AppDescriptor& app) {
    std::size_t count = 0;
    for (const auto& v : cfg_.variants)
      for (const auto& wg : cfg_.wgs) count += selected(app, v, wg) ? 1 : 0;
    return count;
  };
  total_ = 0;
  for (auto* a : cfg_.apps)
    total_ += configs_of(*a) * (a->takes_images() ? cfg_.image_inputs.size() * sizes.size()
                                                  : (own_once ? 1 : sizes.size()));
  if (!cfg_.dry_run && journal_stop().empty()) {
    // Every program of the run at once (build options do not depend on the input), so the
    // worker processes start once. With a resumed file, the programs some input still needs
    // (where the inputs' sizes are known before they are read); each workload builds the rest.
    std::vector<std::pair<std::string, std::string>> jobs;
    for (auto* app : cfg_.apps)
      for (const auto& v : cfg_.variants)
        for (const auto& wg : cfg_.wgs)
          if (selected(*app, v, wg) && !check_launch(*app, v, wg, env_.info()) &&
              still_to_measure(*app, v, wg))
            jobs.emplace_back(kernel_source(app->kernel_file), build_options(*app, v, wg));
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
        Workload w;
        w.app = app;
        w.input_name = src.name;
        w.input = grid;
        run_workload(w, sink);
      }
    }
    for (auto* app : cfg_.apps) {
      if (app->takes_images() || interrupted_ || (own_once && &size != &sizes.front())) continue;
      Workload w;
      w.app = app;
      load_own_inputs(w, cfg_.own_input_size ? cfg_.own_input_size : size);
      run_workload(w, sink);
    }
  }
}

// The workload's truth (or the fault that an earlier process recorded for its truth kernel) and
// whether its input is finite.
void Runner::prepare_truth(Workload& w, int iterations) {
  const AppDescriptor& app = *w.app;
  PhaseTimer timer(phase_s_, "reference");
  w.input_d = to_double(w.input.data, w.width, w.height);
  if (w.power) w.power_d = to_double(w.power->data, w.width, w.height);
  const nlohmann::ordered_json workload = workload_json(w);
  if (const auto fault = journaled_workload_fault(workload)) {
    // Its truth kernel faulted an earlier process: nothing of it runs again.
    w.truth_status = "device_fault";
    w.truth_problem = *fault;
    w.truth = GridD(w.width, w.height);
  } else if (!cached_truth(w, iterations)) {
    if (!app.point) journal_begin_workload(workload, "truth kernel");  // a user app's own kernel
    compute_truth(w, iterations);
    if (!app.point) journal_end();
    keep_truth(w, iterations);
  }
  w.truth_nonfinite = std::count_if(w.truth.data.begin(), w.truth.data.end(),
                                    [](double t) { return !std::isfinite(t); });
  w.input_finite =
      count_nonfinite(w.input.data) == 0 && (!w.power || count_nonfinite(w.power->data) == 0);
  // A truth that is non-finite where the input is finite is broken (a user app's truth kernel
  // that reads garbage, a reference that divides by zero): no row is measured against it.
  if (w.truth_problem.empty() && w.input_finite && w.truth_nonfinite > 0) {
    w.truth_status = "reference_failed";
    w.truth_problem = broken_truth_reason(
        w.truth_nonfinite, static_cast<std::int64_t>(w.truth.data.size()), w.reference);
  }
}

namespace {

std::string truth_key(const Workload& w, int iterations) {
  return w.app->name + "|" + w.input_name + "|" + std::to_string(w.width) + "x" +
         std::to_string(w.height) + "|" + std::to_string(iterations);
}

}  // namespace

bool Runner::cached_truth(Workload& w, int iterations) {
  if (!cfg_.truth_cache) return false;
  TruthCache& cache = *cfg_.truth_cache;
  std::lock_guard<std::mutex> lock(cache.mutex);
  const auto it = cache.grids.find(truth_key(w, iterations));
  if (it == cache.grids.end()) return false;
  w.truth = *it->second;
  w.reference = w.app->point ? "cpu-double" : truth_for(*w.app).kind();
  ++cache.hits;
  return true;
}

// Only a truth that was computed (not a failed truth kernel's empty grid) is kept.
void Runner::keep_truth(const Workload& w, int iterations) {
  if (!cfg_.truth_cache || !w.truth_problem.empty()) return;
  TruthCache& cache = *cfg_.truth_cache;
  const std::size_t bytes = w.truth.data.size() * sizeof(double);
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.bytes + bytes > cache.max_bytes) return;
  if (cache.grids.emplace(truth_key(w, iterations), std::make_shared<const GridD>(w.truth)).second)
    cache.bytes += bytes;
}

void Runner::run_workload(Workload& w, const std::function<void(ResultRow)>& sink) {
  const AppDescriptor& app = *w.app;
  w.width = w.input.width;
  w.height = w.input.height;
  const int iterations = app.traits.iterated ? cfg_.iterations : 1;

  // Skip everything (and the reference) when all keys are already in a resumed file; stop before
  // the reference when the journal says to and a configuration is still to be measured.
  bool any_left = false, to_measure = false;
  std::size_t selected_configs = 0;
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs)
      if (selected(app, v, wg)) {
        ++selected_configs;
        const std::string key = config_key(app, v, wg, w.input_name, w.width, w.height);
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
    for_each_pending(w, [&](const Variant& v, WorkGroup wg, const std::string& key) {
      ResultRow row = describe_row(app, v, wg, w.input_name, w.width, w.height, cfg_.iterations);
      const auto verdict = static_check(w, v, wg);
      row.status = verdict ? verdict->status : "planned";
      if (verdict) row.reason = verdict->reason;
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
    throw InputError(w.input_name + ": injected fault (KPERF_FAULT=workload)");
  prepare_truth(w, iterations);
  std::optional<PhaseTimer> upload_timer;
  upload_timer.emplace(phase_s_, "upload");
  if (device_metrics_) {
    try {
      w.device_truth = device_metrics_->set_truth(w.truth.data, w.width, w.height);
    } catch (const cl::Error&) {
      w.device_truth = false;  // no room: measured on the host
    }
  }

  prepare_buffers(w);
  upload_timer.reset();
  // Compile every program this workload needs up front, in parallel; timing stays sequential.
  std::vector<std::pair<std::string, std::string>> jobs;
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs)
      if (selected(app, v, wg) &&
          !cfg_.skip_keys.count(config_key(app, v, wg, w.input_name, w.width, w.height)) &&
          !static_check(w, v, wg))
        jobs.emplace_back(kernel_source(app.kernel_file), build_options(app, v, wg));
  prebuild(jobs);

  try {
    if (cfg_.rounds > 1)
      run_in_rounds(w, sink);
    else
      for_each_pending(w, [&](const Variant& v, WorkGroup wg, const std::string& key) {
        ResultRow row = run_config(w, v, wg);
        const std::string reason = row.reason;
        sink(std::move(row));
        tick(key);
        if (lost_) throw DeviceLost(key + ": " + reason);
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

void Runner::for_each_pending(
    const Workload& w,
    const std::function<void(const Variant&, WorkGroup, const std::string&)>& visit) {
  const AppDescriptor& app = *w.app;
  for (const auto& v : cfg_.variants)
    for (const auto& wg : cfg_.wgs) {
      if (!selected(app, v, wg)) continue;
      if (interrupt_requested()) throw Abandoned{};
      const std::string key = config_key(app, v, wg, w.input_name, w.width, w.height);
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
      visit(v, wg, key);
    }
}

void Runner::run_in_rounds(Workload& w, const std::function<void(ResultRow)>& sink) {
  std::deque<PreparedConfig> ready;
  // A configuration that faults the device is written at once and ends this process's device
  // work; the others of the workload are measured again by the next process.
  auto end_if_lost = [&](PreparedConfig& p) {
    journal_end();
    if (!lost_) return;
    const std::string reason = p.row.reason;
    sink(std::move(p.row));
    throw DeviceLost(p.key + ": " + reason);
  };
  for_each_pending(w, [&](const Variant& v, WorkGroup wg, const std::string& key) {
    PreparedConfig& p = ready.emplace_back();
    const bool prepared = prepare_config(w, v, wg, p);
    end_if_lost(p);
    if (prepared) return;
    sink(std::move(p.row));
    tick(key);
    ready.pop_back();
  });
  auto share_end = [&](long long r) { return cfg_.reps * r / cfg_.rounds; };  // no overflow
  for (int round = 0; round < cfg_.rounds; ++round) {
    const int samples = static_cast<int>(share_end(round + 1) - share_end(round));
    auto time_round = [&](PreparedConfig& p) {
      if (!p.row.ok()) return;
      journal_begin(journal_json(p.row), "timed launches");
      attempt(p.row, [&] { time_samples(w, *p.variant, p.row, p.sample, samples); });
      end_if_lost(p);
    };
    if (round % 2 == 0)
      std::for_each(ready.begin(), ready.end(), time_round);
    else
      std::for_each(ready.rbegin(), ready.rend(), time_round);
  }
  for (PreparedConfig& p : ready) {
    if (interrupt_requested()) throw Abandoned{};
    finish_config(w, p);
    end_if_lost(p);
    sink(std::move(p.row));
    tick(p.key);
  }
}

}  // namespace kperf
