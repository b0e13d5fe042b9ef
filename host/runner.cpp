// The benchmark runner: inputs x apps x variants x work-groups, each configuration timed with
// profiling events, its output checked, every outcome (failures too) a result row.
#include "runner.hpp"

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

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

namespace {

std::atomic<long> configurations_timed{0}, workloads_started{0};

std::string config_key(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input, int width, int height) {
  return make_key(app.name, v.canonical(), recon_name(v.recon), v.axes_key(), wg.x, wg.y, wg.vec,
                  wg.py, input, width, height);
}

// A row naming the configuration: app, every axis, launch shape, input; nothing measured yet.
ResultRow describe_row(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input_name, int width, int height, int iterations);

std::string layout_key(const Variant& v) {
  return std::string(v.precision_info().in->name) +
         (v.host_perforate ? "/host:" + v.canonical() : std::string());
}

}  // namespace

Runner::Runner(ClEnv& env, RunConfig config)
    : buffers_(std::make_unique<DeviceBuffers>()), env_(env), cfg_(std::move(config)) {
  if (cfg_.cold) {
    // Larger than any last-level cache kperf targets (H100/H200 L2: 50-60 MB) and 4x what the
    // device reports, within one allocation.
    const DeviceInfo& dev = env_.info();
    flush_bytes_ = std::max<std::size_t>(std::size_t{256} << 20, 4 * dev.global_mem_cache_size);
    flush_bytes_ =
        std::min<std::size_t>(flush_bytes_, dev.max_mem_alloc_size / 2) & ~std::size_t{3};
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
    const std::size_t local = std::min<std::size_t>(256, env_.info().max_work_group_size);
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
      for (auto& ev : events)
        env_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(local), nullptr,
                                          &ev);
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
  env_.prebuild(jobs, std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
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

void Runner::run(const std::function<void(ResultRow)>& raw_sink) {
  start_s_ = now_s();
  raw_sink_ = &raw_sink;
  // Every row is journaled before it is handed on: a restarted process resumes after it.
  const std::function<void(ResultRow)> sink = [&](ResultRow row) {
    if (!cfg_.dry_run) journal_row(journal_json(row));
    raw_sink(std::move(row));
  };
  std::size_t image_apps = 0;
  for (auto* a : cfg_.apps) image_apps += a->takes_images() ? 1 : 0;
  std::vector<std::optional<std::pair<int, int>>> sizes(cfg_.sizes.begin(), cfg_.sizes.end());
  if (sizes.empty()) sizes.push_back(std::nullopt);
  // Input files for the apps with their own inputs are read once; else made at every size.
  const bool own_files = !cfg_.temp_path.empty();
  auto configs_of = [&](const AppDescriptor& app) {
    std::size_t count = 0;
    for (const auto& v : cfg_.variants)
      for (const auto& wg : cfg_.wgs) count += selected(app, v, wg) ? 1 : 0;
    return count;
  };
  total_ = 0;
  for (auto* a : cfg_.apps)
    total_ += configs_of(*a) * (a->takes_images() ? cfg_.image_inputs.size() * sizes.size()
                                                  : (own_files ? 1 : sizes.size()));
  if (cfg_.skip_keys.empty() && !cfg_.dry_run && journal_stop().empty()) {
    // Every program of the run at once (build options do not depend on the input), so the
    // worker processes start once; with a resumed file each workload builds what it still needs.
    std::vector<std::pair<std::string, std::string>> jobs;
    for (auto* app : cfg_.apps)
      for (const auto& v : cfg_.variants)
        for (const auto& wg : cfg_.wgs)
          if (selected(*app, v, wg) && !check_launch(*app, v, wg, env_.info()))
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
      if (app->takes_images() || interrupted_ || (own_files && &size != &sizes.front())) continue;
      Workload w;
      w.app = app;
      load_own_inputs(w, size);
      run_workload(w, sink);
    }
  }
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
  {
    PhaseTimer timer(phase_s_, "reference");
    w.input_d = to_double(w.input.data, w.width, w.height);
    if (w.power) w.power_d = to_double(w.power->data, w.width, w.height);
    const nlohmann::ordered_json workload = workload_json(w);
    if (const auto fault = journaled_workload_fault(workload)) {
      // Its truth kernel faulted an earlier process: nothing of it runs again.
      w.truth_status = "device_fault";
      w.truth_problem = *fault;
      w.truth = GridD(w.width, w.height);
    } else {
      if (!app.point) journal_begin_workload(workload, "truth kernel");  // a user app's own kernel
      compute_truth(w, iterations);
      if (!app.point) journal_end();
    }
    w.truth_nonfinite = std::count_if(w.truth.data.begin(), w.truth.data.end(),
                                      [](double t) { return !std::isfinite(t); });
    w.input_finite =
        count_nonfinite(w.input.data) == 0 && (!w.power || count_nonfinite(w.power->data) == 0);
  }
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

DeviceUpload& Runner::input_for(Workload& w, const Variant& v) {
  const std::string key = layout_key(v);
  auto it = w.uploads.find(key);
  if (it == w.uploads.end()) {
    DeviceUpload up;
    up.layout = input_layout(v, w.app->radius, w.width, w.height);
    up.host = make_input(v, w.app->radius, w.input);
    if (!w.app->traits.iterated) {  // an iterated app uploads into its first output
      up.buffer = cl::Buffer(env_.context(), CL_MEM_READ_ONLY, up.host.size());
      env_.queue().enqueueWriteBuffer(up.buffer, CL_TRUE, 0, up.host.size(), up.host.data());
    }
    it = w.uploads.emplace(key, std::move(up)).first;
  }
  DeviceUpload& up = it->second;
  if (v.load_path().reads_image && !up.image_tried) {
    up.image_tried = true;
    const DeviceInfo& dev = env_.info();
    if (!dev.image_support)
      up.image_problem = "device has no image support (CL_DEVICE_IMAGE_SUPPORT is false)";
    else if (static_cast<std::size_t>(up.layout.width) > dev.image2d_max_width ||
             static_cast<std::size_t>(up.layout.height) > dev.image2d_max_height)
      up.image_problem =
          "input of " + std::to_string(up.layout.width) + "x" + std::to_string(up.layout.height) +
          " exceeds CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT " + std::to_string(dev.image2d_max_width) +
          "x" + std::to_string(dev.image2d_max_height);
    else if (v.precision_info().in->image_channel_type == CL_HALF_FLOAT &&
             !half_image_problem().empty())
      up.image_problem = half_image_problem();
    else
      try {
        up.image = cl::Image2D(env_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               cl::ImageFormat(CL_R, v.precision_info().in->image_channel_type),
                               static_cast<std::size_t>(up.layout.width),
                               static_cast<std::size_t>(up.layout.height), 0, up.host.data());
      } catch (const cl::Error& e) {
        up.image_problem = std::string("creating a CL_R image of ") + v.precision_info().in->name +
                           ": " + describe(e);
      }
  }
  return up;
}

const std::string& Runner::half_image_problem() {
  if (half_image_problem_) return *half_image_problem_;
  half_image_problem_ = std::string();
  const float probe[8] = {1.5f,    -2.0f, 0.333251953125f, 65504.0f, 5.9604644775390625e-8f,
                          100.25f, 21.0f, 234.0f};
  std::uint16_t halves[8];
  floats_to_halves(probe, halves, 8);
  try {
    cl::Program program = env_.build(kernel_source("probe_half_image.cl"), "-cl-std=CL1.2");
    cl::Image2D image(env_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                      cl::ImageFormat(CL_R, CL_HALF_FLOAT), 4, 2, 0, halves);
    cl::Buffer out(env_.context(), CL_MEM_WRITE_ONLY, sizeof probe);
    cl::Kernel k(program, "kperf_probe_half_image");
    k.setArg(0, image);
    k.setArg(1, out);
    k.setArg(2, static_cast<cl_int>(4));
    env_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(4, 2), cl::NullRange);
    float got[8];
    env_.queue().enqueueReadBuffer(out, CL_TRUE, 0, sizeof got, got);
    for (int i = 0; i < 8; ++i)
      if (std::memcmp(&got[i], &probe[i], sizeof got[i]) != 0) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "the device lists CL_R/CL_HALF_FLOAT images but reads them wrong (probe "
                      "pixel %d: %.9g, expected %.9g)",
                      i, static_cast<double>(got[i]), static_cast<double>(probe[i]));
        half_image_problem_ = std::string(text);
        break;
      }
  } catch (const cl::Error& e) {
    half_image_problem_ = "probing a CL_R/CL_HALF_FLOAT image: " + describe(e);
  } catch (const BuildError& e) {
    half_image_problem_ = std::string("probing a CL_R/CL_HALF_FLOAT image: ") + e.what();
  }
  return *half_image_problem_;
}

std::string Runner::build_options(const AppDescriptor& app, const Variant& v, WorkGroup wg) const {
  return kernel_build_options(app, v, wg, cfg_.kernel_root, cfg_.params, cfg_.extra_build_options);
}

std::optional<Verdict> check_launch(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                    const DeviceInfo& dev) {
  if (auto verdict = check_variant(v, app, wg)) return verdict;
  if (v.load_path().reads_image && !dev.image_support)
    return Verdict{"not_applicable", "the image load path needs image support and " + dev.name +
                                         " has none (CL_DEVICE_IMAGE_SUPPORT is false)"};
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  if (items > dev.max_work_group_size)
    return Verdict{"invalid_config", "work-group " + std::to_string(wg.x) + "x" +
                                         std::to_string(wg.y) + " = " + std::to_string(items) +
                                         " work-items exceeds CL_DEVICE_MAX_WORK_GROUP_SIZE " +
                                         std::to_string(dev.max_work_group_size)};
  for (int d = 0; d < 2; ++d) {
    const std::size_t side = d == 0 ? wg.x : wg.y;
    if (dev.max_work_item_sizes.size() > static_cast<std::size_t>(d) &&
        side > dev.max_work_item_sizes[d])
      return Verdict{"invalid_config",
                     std::string("work-group ") + (d == 0 ? "x" : "y") + " size " +
                         std::to_string(side) + " exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES[" +
                         std::to_string(d) + "] = " + std::to_string(dev.max_work_item_sizes[d])};
  }
  const std::size_t tile_bytes = tile_local_bytes(app, v, wg);
  if (tile_bytes > dev.local_mem_size)
    return Verdict{"invalid_config", "tile needs " + std::to_string(tile_bytes) +
                                         " bytes of local memory; device has " +
                                         std::to_string(dev.local_mem_size)};
  return std::nullopt;
}

std::size_t tile_local_bytes(const AppDescriptor& app, const Variant& v, WorkGroup wg) {
  if (!uses_local_tile(app, v)) return 0;
  // As kperf_tile.cl lays the tile out: rows padded to 16-byte chunks when the block width is a
  // multiple of 4, by 4 slots each side (8 for half input where the width is a multiple of 8).
  const WorkGroup block = block_of(v, wg);
  const int r = app.radius;
  // The fused li fill of a frame-free scheme reads the next block's first computed line from a
  // tile one period larger along y, and along x where the period is 3 or more
  // (kperf_tile.cl: KPERF_OUT_NEXT_Y, KPERF_OUT_NEXT_X).
  const bool fused_li = !v.output.none() && v.output_recon == Recon::kLi && v.fill().launches == 1;
  // (Not where the blocks overlap: the block holds those lines.)
  const bool next = fused_li && v.scheme->frame_free;
  const int ext_y = next && v.output.ky() > 1 && !blocks_overlap_y(v, wg) ? v.output.ky() : 0;
  const int ext_x = next && v.output.kx() > 2 && !blocks_overlap_x(v, wg) ? v.output.kx() : 0;
  // Blocks that overlap along x start at multiples of a work-item's columns (KPERF_BLOCK_X_ALIGN).
  const int align = blocks_overlap_x(v, wg) ? block.x / wg.x : block.x;
  const int pad = v.precision_info().in->bytes == 2 && align % 8 == 0 ? 8 : 4;
  const int stride =
      align % 4 == 0 && r <= 4 ? block.x + 2 * pad + (ext_x + 3) / 4 * 4 : block.x + 2 * r + ext_x;
  // rows:k li over whole periods reads the kept row below the tile's last rows too
  // (perforate_lines.cl: KPERF_TILE_EXTRA_ROWS).
  const int extra_rows = std::string(v.scheme->family) == "rows" && v.recon == Recon::kLi &&
                                 v.output.ky() == 1 && wg.py % v.skip == 0
                             ? v.skip - 1
                             : 0;
  return static_cast<std::size_t>(stride) *
         static_cast<std::size_t>(block.y + 2 * r + ext_y + extra_rows) * sizeof(float);
}

nlohmann::ordered_json Runner::energy_json() const {
  if (!cfg_.energy_requested) return nullptr;
  if (!cfg_.energy) return {{"source", nullptr}, {"reason", cfg_.energy_absent_reason}};
  nlohmann::ordered_json j = {{"source", cfg_.energy->source()},
                              {"counter", cfg_.energy->describe()},
                              {"idle_power_w", idle_power_w_},
                              {"counter_period_s", counter_period_s_},
                              {"window_s", cfg_.energy_options.window_s},
                              {"reps", cfg_.energy_options.reps}};
  if (!idle_problem_.empty()) j["idle_problem"] = idle_problem_;
  return j;
}

AppTruth& Runner::truth_for(const AppDescriptor& app) {
  auto it = truths_.find(app.name);
  if (it == truths_.end()) {
    PhaseTimer timer(phase_s_, "compile");
    it = truths_
             .emplace(app.name, std::make_unique<AppTruth>(env_, app, cfg_.kernel_root, cfg_.params,
                                                           cfg_.extra_build_options))
             .first;
  }
  return *it->second;
}

void Runner::compute_truth(Workload& w, int iterations) {
  const AppDescriptor& app = *w.app;
  if (app.point) {
    w.reference = "cpu-double";
    w.truth =
        reference_run(app, w.input_d, w.power_d ? &*w.power_d : nullptr, iterations, cfg_.params);
    return;
  }
  try {
    AppTruth& truth = truth_for(app);
    w.reference = truth.kind();
    if (!truth.fp64_problem().empty() && warned_truth_.insert(app.name).second)
      std::fprintf(stderr, "warning: %s: its truth is its float accurate kernel; %s\n",
                   app.name.c_str(), truth.fp64_problem().c_str());
    w.truth = truth.run(w.input_d);
  } catch (const BuildError& e) {
    // The configurations would not build either: each becomes a build_failed row with the log.
    w.truth_problem = std::string("the accurate truth kernel does not build: ") + e.what();
    w.truth_log = e.log();
    w.truth = GridD(w.width, w.height);
  } catch (const cl::Error& e) {
    std::string why;
    w.truth = GridD(w.width, w.height);
    if (device_responds(why)) {
      w.truth_status = "run_failed";
      w.truth_problem = "the accurate truth kernel failed: " + describe(e);
      return;
    }
    // The truth kernel faulted the device: every configuration of the workload is a fault, and
    // no further device work is possible in this process.
    lost_ = true;
    nlohmann::ordered_json workload = workload_json(w);
    workload["reason"] = "the accurate truth kernel faulted the device: " + describe(e) +
                         "; then the device accepted no more commands (" + why + ")";
    journal_workload_fault(workload);
    throw DeviceLost(app.name + " on " + w.input_name + ": " +
                     workload["reason"].get<std::string>());
  }
}

nlohmann::ordered_json Runner::workload_json(const Workload& w) const {
  nlohmann::ordered_json j = cfg_.journal_fields;
  j["app"] = w.app->name;
  j["input"] = w.input_name;
  j["width"] = w.width;
  j["height"] = w.height;
  return j;
}

GridEvaluator Runner::model_evaluator(const AppDescriptor& app) {
  if (app.point) return {};
  return [this, &app](const GridD& tiles) { return truth_for(app).run(tiles); };
}

std::optional<Verdict> Runner::static_check(const Workload& w, const Variant& v,
                                            WorkGroup wg) const {
  if (auto verdict = check_launch(*w.app, v, wg, env_.info())) return verdict;
  if (!w.alloc_problem.empty()) return Verdict{"invalid_config", w.alloc_problem};
  if (!w.truth_problem.empty()) return Verdict{w.truth_status, w.truth_problem};
  if (const auto misfit = output_misfit(v.output, w.width, w.height))
    return Verdict{"not_applicable", "output scheme " + *misfit};
  return std::nullopt;
}

namespace {

// What the compiler said about a program that built (its warnings); empty where it said nothing
// but blanks. NVIDIA's driver (580) leaves the log empty even under -cl-nv-verbose.
std::string compiler_messages(const cl::Program& program, const cl::Device& device) {
  try {
    std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
    if (log.find_first_not_of(" \t\r\n") == std::string::npos) return std::string();
    return log;
  } catch (const cl::Error&) {
    return std::string();
  }
}

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

}  // namespace

ResultRow Runner::run_config(Workload& w, const Variant& v, WorkGroup wg) {
  PreparedConfig p;
  const bool ready = prepare_config(w, v, wg, p);
  if (ready && !lost_) {
    journal_begin(journal_json(p.row), "timed launches");
    attempt(p.row, [&] { time_samples(w, v, p.row, p.sample, cfg_.reps); });
    if (!lost_) finish_config(w, p);
  }
  journal_end();
  return std::move(p.row);
}

bool Runner::device_responds(std::string& why) {
  if (injected_loss_) {
    why = "clFinish failed: CL_INVALID_COMMAND_QUEUE (injected: KPERF_FAULT=lose-queue)";
    return false;
  }
  try {
    env_.queue().finish();
    cl_int probe = 1;
    cl::Buffer buffer(env_.context(), CL_MEM_READ_WRITE, sizeof probe);
    env_.queue().enqueueWriteBuffer(buffer, CL_TRUE, 0, sizeof probe, &probe);
    env_.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, sizeof probe, &probe);
    return true;
  } catch (const cl::Error& e) {
    why = describe(e);
    return false;
  }
}

void Runner::injected_launch_fault(const std::string& key) {
  if (const auto crash = fault_argument("crash"); crash && key.find(*crash) != std::string::npos) {
    std::signal(SIGSEGV, SIG_DFL);  // as the driver's own crash: no handler between
    std::raise(SIGSEGV);
  }
  if (const auto lose = fault_argument("lose-queue");
      lose && key.find(*lose) != std::string::npos) {
    injected_loss_ = true;
    throw cl::Error(CL_INVALID_COMMAND_QUEUE, "clFinish");
  }
}

bool Runner::attempt(ResultRow& row, const std::function<void()>& part) {
  auto fail = [&](const std::string& status, const std::string& reason) {
    row.samples_ns.clear();
    row.round_start_ns.clear();
    row.time.reset();
    row.status = status;
    row.reason = reason;
    return false;
  };
  try {
    part();
    return true;
  } catch (const cl::Error& e) {
    std::string why;
    if (!device_responds(why)) {
      lost_ = true;
      return fail("device_fault",
                  describe(e) + "; then the device accepted no more commands (" + why + ")");
    }
    return fail("run_failed", describe(e));
  } catch (const std::bad_alloc&) {
    // Not the device's fault, and not the run's end: this configuration is a row, the sweep goes
    // on.
    return fail("host_error", "the host ran out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return fail("host_error", e.what());
  }
}

bool Runner::prepare_config(Workload& w, const Variant& v, WorkGroup wg, PreparedConfig& p) {
  const AppDescriptor& app = *w.app;
  const DeviceInfo& dev = env_.info();
  p.variant = &v;
  p.wg = wg;
  p.key = config_key(app, v, wg, w.input_name, w.width, w.height);
  ResultRow& row = p.row;
  row = describe_row(app, v, wg, w.input_name, w.width, w.height, cfg_.iterations);
  row.note = w.note;
  journal_begin(journal_json(row), "build and set-up");
  auto reject = [&](const std::string& status, const std::string& reason) {
    row.status = status;
    row.reason = reason;
    return false;
  };

  row.reference = w.reference;
  if (auto verdict = static_check(w, v, wg)) {
    if (verdict->status == "build_failed") row.build_log = w.truth_log;
    return reject(verdict->status, verdict->reason);
  }
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  const std::string options = build_options(app, v, wg);
  cl::Program program;
  try {
    PhaseTimer timer(phase_s_, "compile");
    program = env_.build(kernel_source(app.kernel_file), options);
  } catch (const BuildError& e) {
    row.build_log = e.log();
    return reject("build_failed", std::string(e.what()) + " (options: " + options + ")");
  }
  row.build_log = compiler_messages(program, env_.device());

  std::optional<Verdict> verdict;  // why the built kernel cannot run here
  const bool ready = attempt(row, [&] {
    cl::Kernel kernel(program, "kperf_app");
    const auto kernel_wg = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env_.device());
    const auto kernel_local = kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(env_.device());
    row.kernel_info = ResultRow::KernelInfo{
        kernel_wg, kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(env_.device()),
        kernel_local};
    // KPERF_LAUNCH_PAST_KERNEL_WG=1 launches such a shape anyway, so that the launch itself (ok,
    // or run_failed with its error) says whether the driver's figure binds.
    static const bool launch_past_kernel_wg = std::getenv("KPERF_LAUNCH_PAST_KERNEL_WG") != nullptr;
    if (items > kernel_wg && !launch_past_kernel_wg) {
      verdict = Verdict{"invalid_config",
                        "work-group of " + std::to_string(items) +
                            " work-items exceeds this kernel's CL_KERNEL_WORK_GROUP_SIZE " +
                            std::to_string(kernel_wg)};
      return;
    }
    if (kernel_local > dev.local_mem_size) {
      verdict = Verdict{"invalid_config", "kernel needs " + std::to_string(kernel_local) +
                                              " bytes of local memory; device has " +
                                              std::to_string(dev.local_mem_size)};
      return;
    }
    std::optional<PhaseTimer> upload_timer;
    upload_timer.emplace(phase_s_, "upload");
    p.input = &input_for(w, v);
    upload_timer.reset();
    if (v.load_path().reads_image && !p.input->image) {
      verdict = Verdict{"not_applicable", p.input->image_problem};
      return;
    }
    p.steps = launch_steps(w, v, program, kernel, *p.input);
    const cl::NDRange global(static_cast<std::size_t>(groups_along_x(v, wg, w.width)) * wg.x,
                             static_cast<std::size_t>(groups_along_y(v, wg, w.height)) * wg.y);
    const cl::NDRange local(static_cast<std::size_t>(wg.x), static_cast<std::size_t>(wg.y));
    p.sample = sample_launches(v, w, p.steps, global, local, row.iterations);
    if (fault_at("alloc", configurations_timed)) throw std::bad_alloc();
  });
  if (verdict) return reject(verdict->status, verdict->reason);
  return ready;
}

void Runner::finish_config(Workload& w, PreparedConfig& p) {
  ResultRow& row = p.row;
  if (!row.ok()) return;
  journal_begin(journal_json(row), "output check");
  const Variant& v = *p.variant;
  const bool finished = attempt(row, [&] {
    if (cfg_.energy_requested) measure_energy(w, row, p.sample);
    if (cfg_.transfers) {
      PhaseTimer timer(phase_s_, "transfers");
      time_transfers(w, v, row, p.sample, *p.input);
    }
    std::vector<float> output;
    if (!measure_errors(w, v, row, p.sample, cfg_.rounds > 1, output)) return;
    if (cfg_.verify) verify_against_model(w, v, row, output);
    if (!cfg_.save_outputs_dir.empty()) save_output(w, row, std::move(output));
  });
  if (finished && row.ok()) add_bandwidth(w, v, p.wg, row);
}

// Under --rounds a drift of the device's speed during the run (clocks, temperature, neighbours
// on the host) reaches every configuration of the workload alike: each round takes a share of
// --reps samples from every configuration, the order reversed every other round so that a
// drift within a round cancels too. A configuration is written once all its rounds ran; an
// interrupt leaves the workload's unfinished configurations for --resume.
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

std::vector<LaunchStep> Runner::launch_steps(Workload& w, const Variant& v,
                                             const cl::Program& program, cl::Kernel kernel,
                                             DeviceUpload& input) {
  const AppDescriptor& app = *w.app;
  const std::size_t in_type = storage_index(*v.precision_info().in);
  const StorageType& out_type = *v.precision_info().out;
  auto set_args = [&](cl::Kernel& k, const cl::Buffer& in, const cl::Buffer& out) {
    if (v.load_path().reads_image)
      k.setArg(0, *input.image);
    else
      k.setArg(0, in);
    k.setArg(1, out);
    k.setArg(2, static_cast<cl_int>(w.width));
    k.setArg(3, static_cast<cl_int>(w.height));
    cl_uint next = 4;
    if (app.traits.second_input) k.setArg(next++, w.buf->power[in_type]);
    for (float value : w.float_args) k.setArg(next++, value);
  };
  // One launch step per output buffer: an iterated app ping-pongs between two. Under an output
  // scheme each step is the app kernel and then the fill kernel on the same output.
  auto make_step = [&](cl::Kernel app_kernel, const cl::Buffer& in, const cl::Buffer& out) {
    LaunchStep step{app_kernel, std::nullopt};
    set_args(step.app, in, out);
    if (!v.output.none() && v.fill().launches > 1) {
      step.fill = cl::Kernel(program, "kperf_output_fill");
      step.fill->setArg(0, out);
      step.fill->setArg(1, static_cast<cl_int>(w.width));
      step.fill->setArg(2, static_cast<cl_int>(w.height));
    }
    return step;
  };
  std::vector<LaunchStep> steps;
  if (app.traits.iterated) {
    const cl::Buffer &view0 = w.buf->out.view(out_type, 0), &view1 = w.buf->out.view(out_type, 1);
    steps.push_back(make_step(kernel, view0, view1));
    steps.push_back(make_step(cl::Kernel(program, "kperf_app"), view1, view0));
  } else {
    steps.push_back(make_step(kernel, input.buffer, w.buf->out.view(out_type, 0)));
  }
  return steps;
}

// Bandwidth against the byte model and the copy kernel's, for an ok row.
void Runner::add_bandwidth(const Workload& w, const Variant& v, WorkGroup wg, ResultRow& row) {
  const AppDescriptor& app = *w.app;
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
    row.copy_gbps = copy_gbps_for(w.width, w.height);
  }
  row.roofline = row.copy_gbps > 0 ? row.gbps / row.copy_gbps : 0;
}

// The device buffers of the workload's size (kept from the last workload of that size), its
// second input and an iterated app's initial state per storage type, its float arguments; or
// why they do not fit (every configuration is then an invalid_config row).
void Runner::prepare_buffers(Workload& w) {
  const AppDescriptor& app = *w.app;
  const std::size_t guard_bytes = guard_bytes_for(env_.info());
  // Input and output, or two outputs that ping-pong (an iterated app reads its input from the
  // first); and a second input.
  const std::size_t buffers = 2 + (app.traits.second_input ? 1 : 0);
  if (auto problem = grid_memory_problem(env_.info(), w.width, w.height, buffers)) {
    w.alloc_problem = *problem;
  } else {
    try {
      DeviceBuffers& b = *buffers_;
      if (!b.out.sized(w.width, w.height)) b = DeviceBuffers{};  // free the old size's first
      b.out.allocate(env_.context(), w.width, w.height, guard_bytes, app.traits.iterated ? 2 : 1);
      auto& ctx = env_.context();
      auto& q = env_.queue();
      for (const StorageType& type : storage_types()) {
        const bool used =
            std::any_of(cfg_.variants.begin(), cfg_.variants.end(),
                        [&](const Variant& v) { return v.precision_info().in == &type; });
        if (!used) continue;
        const std::size_t t = storage_index(type);
        // An iterated app's first output buffer starts as its input, guards and all.
        if (app.traits.iterated)
          w.in_init[t] = guarded_bytes(guard_bytes, to_storage_bytes(w.input.data, type));
        if (app.traits.second_input) {
          const std::vector<unsigned char> second = to_storage_bytes(w.power->data, type);
          if (!b.power[t]()) b.power[t] = cl::Buffer(ctx, CL_MEM_READ_ONLY, second.size());
          q.enqueueWriteBuffer(b.power[t], CL_TRUE, 0, second.size(), second.data());
        }
      }
      w.float_args.assign(static_cast<std::size_t>(app.traits.float_args), 0.0f);
      if (app.traits.make_float_args)
        app.traits.make_float_args(w.width, w.height, w.float_args.data());
      w.buf = &b;
    } catch (const cl::Error& e) {
      *buffers_ = DeviceBuffers{};
      w.alloc_problem = "allocating buffers for " + std::to_string(w.width) + "x" +
                        std::to_string(w.height) + ": " + describe(e);
    }
  }
}

}  // namespace kperf
