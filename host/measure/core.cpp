// The measuring core (core.hpp): binding an input's buffers and truths, the checks before a
// build, building and setting up every launch of a chain, and the attempt that turns a failure
// into the measurement's status. Timing is in core_timing.cpp, outputs in core_outputs.cpp.
#include "core.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>

#include "cache_probe.hpp"
#include "core_impl.hpp"
#include "fused_program.hpp"
#include "fused_rows.hpp"
#include "injected_faults.hpp"
#include "kernel_axes.hpp"
#include "phases.hpp"
#include "storage.hpp"

namespace kperf {

namespace fs = std::filesystem;

namespace {

// A chain's launch checks before a build: a fused chain's own, or each stage's.
std::optional<std::pair<int, Verdict>> stage_checks(const Chain& chain, const DeviceInfo& dev) {
  if (is_fused(chain)) {
    if (auto problem = fused_chain_problem(chain))
      return std::make_pair(problem->first, Verdict{Status::kNotApplicable, problem->second});
    return check_fused_launch(chain, dev);
  }
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (auto verdict = check_launch(*chain[k].app, chain[k].variant, chain[k].wg, dev))
      return std::make_pair(static_cast<int>(k), *verdict);
  return std::nullopt;
}

}  // namespace

void Measurement::fail(Status s, std::string why, int stage) {
  status = s;
  reason = std::move(why);
  failed_stage = stage;
}

Core::Core(ClEnv& env, CoreOptions options)
    : env_(env), opt_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (opt_.cold) {
    flush_bytes_ = cold_flush_bytes(
        env_.info(), [&] { return command_cache_probe(env_, opt_.kernel_root).cache_bytes; });
    flush_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, flush_bytes_);
  }
  // Errors on the device by default where the host would be the bottleneck (a GPU); on a CPU
  // device the host's separable SSIM costs less than the device's direct windows.
  const std::string& where = opt_.metrics_on;
  if (where == "host") {
    impl_->metrics_reason = "--metrics-on host";
  } else if (const auto problem = DeviceMetrics::unsupported(env_.device())) {
    impl_->metrics_reason = *problem;
  } else if (where == "device" || env_.info().is_gpu()) {
    try {
      impl_->metrics.push_back(std::make_unique<DeviceMetrics>(env_, opt_.kernel_root));
      impl_->metrics_on_device = true;
    } catch (const std::exception& e) {
      impl_->metrics_reason = std::string("metrics kernels did not build: ") + e.what();
      std::fprintf(stderr, "warning: %s; measuring on the host\n", impl_->metrics_reason.c_str());
    }
  } else {
    impl_->metrics_reason = "a CPU device: the host's separable SSIM is cheaper";
  }
}

Core::~Core() {
  try {
    impl_->unmap_staging(env_.queue());
  } catch (const cl::Error&) {
  }
}

nlohmann::ordered_json Core::metrics_json() const {
  nlohmann::ordered_json j = {{"on", impl_->metrics_on_device ? "device" : "host"}};
  if (!impl_->metrics_reason.empty()) j["reason"] = impl_->metrics_reason;
  return j;
}

const std::string& Core::kernel_source(const std::string& file) {
  auto it = impl_->sources.find(file);
  if (it == impl_->sources.end())
    it = impl_->sources
             .emplace(file, read_file((fs::path(opt_.kernel_root) / "kernels" / file).string()))
             .first;
  return it->second;
}

void Core::bind(BoundInput& in) {
  PhaseTimer timer(phases_, "upload");
  const AppDescriptor& first = *in.apps.front();
  const bool iterated = first.traits.iterated;
  // An input and every stage's output, or two outputs that ping-pong (an iterated app reads its
  // input from the first); and a second input.
  const std::size_t buffers =
      (iterated ? 2 : 1 + in.apps.size()) + (first.traits.second_input ? 1 : 0);
  impl_->power_bound.fill(false);
  if (auto problem = grid_memory_problem(env_.info(), in.width, in.height, buffers)) {
    in.alloc_problem = *problem;
  } else {
    try {
      if (!outputs_.empty() && !outputs_[0]->sized(in.width, in.height)) {
        outputs_.clear();  // the old size's freed first
        for (cl::Buffer& b : impl_->power) b = cl::Buffer();
      }
      for (std::size_t k = 0; k < in.apps.size(); ++k) {
        if (outputs_.size() <= k) outputs_.push_back(std::make_unique<OutputBuffers>());
        outputs_[k]->allocate(env_.context(), in.width, in.height, guard_bytes_for(env_.info()),
                              k == 0 && iterated ? 2 : 1);
      }
    } catch (const cl::Error& e) {
      outputs_.clear();
      for (cl::Buffer& b : impl_->power) b = cl::Buffer();
      in.alloc_problem = "allocating buffers for " + std::to_string(in.width) + "x" +
                         std::to_string(in.height) + ": " + describe(e);
    }
  }
  in.float_args.assign(static_cast<std::size_t>(first.traits.float_args), 0.0f);
  if (first.traits.make_float_args)
    first.traits.make_float_args(in.width, in.height, in.float_args.data());
  in.truth_on_device.assign(in.truths.size(), false);
  if (opt_.residency) in.uploads = opt_.residency->uploads(input_key(in));
  if (!impl_->metrics_on_device) return;
  for (std::size_t k = 0; k < in.truths.size(); ++k) {
    try {
      if (impl_->metrics.size() <= k)
        impl_->metrics.push_back(std::make_unique<DeviceMetrics>(env_, opt_.kernel_root));
      const GridD& t = in.truths[k];
      in.truth_on_device[k] =
          opt_.residency
              ? impl_->metrics[k]->use_truth(opt_.residency->truth(
                    env_, truth_key(in) + "|" + std::to_string(k), t.data, t.width, t.height))
              : impl_->metrics[k]->set_truth(t.data, t.width, t.height);
    } catch (const cl::Error&) {
      in.truth_on_device[k] = false;  // no room: measured on the host
    }
  }
}

cl::Buffer& Core::power(const BoundInput& in, const StorageType& type) {
  const std::size_t t = storage_index(type);
  if (!impl_->power_bound[t]) {
    const std::vector<unsigned char> bytes = to_storage_bytes(in.power->data, type);
    if (!impl_->power[t]())
      impl_->power[t] = cl::Buffer(env_.context(), CL_MEM_READ_ONLY, bytes.size());
    env_.queue().enqueueWriteBuffer(impl_->power[t], CL_TRUE, 0, bytes.size(), bytes.data());
    impl_->power_bound[t] = true;
  }
  return impl_->power[t];
}

std::optional<std::pair<int, Verdict>> Core::static_check(const BoundInput& in,
                                                          const Chain& chain) const {
  if (auto problem = stage_checks(chain, env_.info())) return problem;
  if (!in.alloc_problem.empty())
    return std::make_pair(-1, Verdict{Status::kInvalidConfig, in.alloc_problem});
  if (!in.truth_problem.empty())
    return std::make_pair(-1, Verdict{in.truth_status, in.truth_problem});
  if (is_fused(chain)) return std::nullopt;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const int stage = static_cast<int>(k);
    if (const auto misfit = output_misfit(chain[k].variant.output, in.width, in.height))
      return std::make_pair(stage, Verdict{Status::kNotApplicable, "output scheme " + *misfit});
    if (k > 0)
      if (auto problem = stage_link_problem(chain[k - 1].variant, chain[k].variant))
        return std::make_pair(stage, Verdict{Status::kNotApplicable, *problem});
  }
  return std::nullopt;
}

std::pair<std::string, std::string> Core::program_of(const Chain& chain, std::size_t k) {
  if (!is_fused(chain)) {
    const PipelineStage& s = chain[k];
    return {kernel_source(s.app->kernel_file),
            kernel_build_options(*s.app, s.variant, s.wg, opt_.kernel_root, opt_.params,
                                 opt_.extra_build_options)};
  }
  const std::string id = chain_label(chain);
  auto it = impl_->fused.find(id);
  if (it == impl_->fused.end()) {
    const FusedProgram p =
        fused_program(chain, opt_.kernel_root, opt_.params, opt_.extra_build_options);
    it = impl_->fused.emplace(id, std::make_pair(p.source, p.options)).first;
  }
  return it->second;
}

std::vector<std::pair<std::string, std::string>> Core::programs(const Chain& chain) {
  std::vector<std::pair<std::string, std::string>> jobs;
  if (is_fused(chain)) {
    if (!fused_chain_problem(chain) && !check_fused_launch(chain, env_.info()))
      jobs.push_back(program_of(chain, chain.size() - 1));
    return jobs;
  }
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (!check_launch(*chain[k].app, chain[k].variant, chain[k].wg, env_.info()))
      jobs.push_back(program_of(chain, k));
  return jobs;
}

bool Core::prepare(BoundInput& in, const Chain& chain, Prepared& p) {
  p.chain = chain;
  p.m = Measurement{};
  p.m.stages.resize(chain.size());
  p.launches.clear();
  if (lost()) {
    p.m.fail(Status::kDeviceFault, "not measured: the device was lost by " + lost_by_);
    return false;
  }
  if (auto problem = static_check(in, chain)) {
    const auto& [stage, verdict] = *problem;
    p.m.fail(verdict.status, stage_prefix(chain, stage) + verdict.reason, stage);
    if (verdict.status == Status::kBuildFailed) p.m.stages.front().build_log = in.truth_log;
    return false;
  }
  const bool fused = is_fused(chain);
  const std::size_t count = fused ? 1 : chain.size();
  p.launches.reserve(count);  // samples point into their launch's steps: no reallocation
  const bool uploaded = attempt(p, [&] {
    PhaseTimer timer(phases_, "upload");
    const int radius = fused ? fused_tile_halo(chain) : chain[0].app->radius;
    p.input = &device_upload(env_, *in.uploads, chain[0].variant, radius, in.input,
                             !chain[0].app->traits.iterated, [this]() -> const std::string& {
                               if (!impl_->half_image_problem)
                                 impl_->half_image_problem =
                                     probe_half_images(env_, opt_.kernel_root);
                               return *impl_->half_image_problem;
                             });
  });
  if (!uploaded) return false;
  if (chain[0].variant.load_path().reads_image && !p.input->image) {
    p.m.fail(Status::kNotApplicable, stage_prefix(chain, 0) + p.input->image_problem, 0);
    return false;
  }
  for (std::size_t i = 0; i < count; ++i)
    if (!set_up_launch(in, chain, i, p)) return false;
  return true;
}

// Builds launch i (stage i's, or a fused chain's one) and binds its kernels: the input (the
// chain's, or the previous launch's output), its output, the grid, a second input and float
// arguments, the fill kernel of a two-launch output scheme; an iterated app's two steps swap its
// two outputs.
bool Core::set_up_launch(BoundInput& in, const Chain& chain, std::size_t i, Prepared& p) {
  const bool fused = is_fused(chain);
  const std::size_t k = fused ? chain.size() - 1 : i;
  const int stage = fused ? -1 : static_cast<int>(k);
  const PipelineStage& s = chain[k];
  const Variant& v = s.variant;
  StageMeasurement& sm = p.m.stages[k];
  const std::string prefix = fused ? std::string("the fused kernel: ") : stage_prefix(chain, stage);
  const auto [source, options] = program_of(chain, k);
  LaunchSetup& l = p.launches.emplace_back();
  l.stage = k;
  l.out_type = v.precision_info().out;
  try {
    PhaseTimer timer(phases_, "compile");
    l.program = env_.build(source, options);
  } catch (const BuildError& e) {
    sm.build_log = e.log();
    p.m.fail(Status::kBuildFailed, prefix + e.what() + " (options: " + options + ")", stage);
    return false;
  }
  sm.build_log = compiler_messages(l.program, env_.device());
  std::optional<Verdict> verdict;  // why the built kernel cannot run here
  const bool ready = attempt(
      p,
      [&] {
        cl::Kernel kernel(l.program, "kperf_app");
        ResultRow::KernelInfo info;
        verdict = check_built_kernel(kernel, env_, s.wg, info);
        sm.kernel_info = info;
        if (verdict) return;
        bind_steps(in, p, l, kernel, i);
        const auto [groups_x, groups_y] = fuse_rows(chain)
                                              ? rolling_groups(chain, in.width, in.height)
                                              : std::make_pair(groups_along_x(v, s.wg, in.width),
                                                               groups_along_y(v, s.wg, in.height));
        const cl::NDRange global(static_cast<std::size_t>(groups_x) * s.wg.x,
                                 static_cast<std::size_t>(groups_y) * s.wg.y);
        const cl::NDRange local(static_cast<std::size_t>(s.wg.x), static_cast<std::size_t>(s.wg.y));
        const int launches =
            s.app->traits.iterated ? effective_iterations(in.iterations, v.iterations_skip) : 1;
        l.sample =
            make_sample_launches(env_, v, in.width, in.height, l.steps, global, local, launches);
        l.output = outputs_[k]->view(*l.out_type, l.sample.final_buffer());
        if (fault_at("alloc", configurations_timed)) throw std::bad_alloc();
      },
      stage);
  if (verdict) p.m.fail(verdict->status, prefix + verdict->reason, stage);
  return ready && !verdict;
}

void Core::bind_steps(BoundInput& in, Prepared& p, LaunchSetup& l, cl::Kernel kernel,
                      std::size_t i) {
  const Chain& chain = p.chain;
  const std::size_t k = l.stage;
  const PipelineStage& s = chain[k];
  const Variant& v = s.variant;
  const StorageType& in_type = *v.precision_info().in;
  OutputBuffers& out = *outputs_[k];
  const bool image = i == 0 && v.load_path().reads_image;
  auto set_args = [&](cl::Kernel& kk, const cl::Buffer& from, const cl::Buffer& to) {
    if (image)
      kk.setArg(0, *p.input->image);
    else
      kk.setArg(0, from);
    kk.setArg(1, to);
    kk.setArg(2, static_cast<cl_int>(in.width));
    kk.setArg(3, static_cast<cl_int>(in.height));
    cl_uint next = 4;
    if (s.app->traits.second_input) kk.setArg(next++, power(in, in_type));
    if (i == 0)
      for (float value : in.float_args) kk.setArg(next++, value);
  };
  auto make_step = [&](cl::Kernel app_kernel, const cl::Buffer& from, const cl::Buffer& to) {
    LaunchStep step{app_kernel, std::nullopt};
    set_args(step.app, from, to);
    if (!v.output.none() && v.fill().launches > 1) {
      step.fill = cl::Kernel(l.program, "kperf_output_fill");
      step.fill->setArg(0, to);
      step.fill->setArg(1, static_cast<cl_int>(in.width));
      step.fill->setArg(2, static_cast<cl_int>(in.height));
    }
    return step;
  };
  const StorageType& out_type = *l.out_type;
  if (s.app->traits.iterated) {
    // It reads its input from its first output, which starts as the input, guards and all.
    std::vector<unsigned char>& start = in.in_init[storage_index(in_type)];
    if (start.empty())
      start = guarded_bytes(out.guard_bytes(), to_storage_bytes(in.input.data, in_type));
    const cl::Buffer &view0 = out.view(out_type, 0), &view1 = out.view(out_type, 1);
    l.steps.push_back(make_step(kernel, view0, view1));
    l.steps.push_back(make_step(cl::Kernel(l.program, "kperf_app"), view1, view0));
  } else {
    const cl::Buffer& from = i == 0 ? p.input->buffer : p.launches[i - 1].output;
    l.steps.push_back(make_step(kernel, from, out.view(out_type, 0)));
  }
}

bool Core::attempt(Prepared& p, const std::function<void()>& part, int stage) {
  auto fail = [&](Status status, const std::string& reason) {
    p.m.samples_ns.clear();
    p.m.round_start_ns.clear();
    p.m.time.reset();
    for (StageMeasurement& s : p.m.stages) s.samples_ns.clear();
    p.m.fail(status, stage_prefix(p.chain, stage) + reason, stage);
    return false;
  };
  try {
    part();
    return true;
  } catch (const cl::Error& e) {
    std::string why =
        "clFinish failed: CL_INVALID_COMMAND_QUEUE (injected: KPERF_FAULT=lose-queue)";
    if (injected_loss_ || !device_responds(env_, why)) {
      lost_by_ = p.key + " (" + describe(e) + ")";
      return fail(Status::kDeviceFault,
                  describe(e) + "; then the device accepted no more commands (" + why + ")");
    }
    return fail(Status::kRunFailed, describe(e));
  } catch (const std::bad_alloc&) {
    // Not the device's fault, and not the run's end: this measurement is a row, the sweep goes on.
    return fail(Status::kHostError, "the host ran out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return fail(Status::kHostError, e.what());
  }
}

void Core::launch_fault(Prepared& p) {
  if (p.fault_checked) return;
  p.fault_checked = true;
  if (injected_launch_fault(p.key, p.fault_stage)) {
    injected_loss_ = true;
    throw cl::Error(CL_INVALID_COMMAND_QUEUE, "clFinish");
  }
}

Measurement Core::measure(BoundInput& in, const Chain& chain, const std::string& key,
                          MeasureMode mode, const std::string& fault_stage) {
  Prepared p;
  p.key = key;
  p.fault_stage = fault_stage;
  if (prepare(in, chain, p)) {
    if (mode != MeasureMode::kFinalError) attempt(p, [&] { time(in, p, opt_.reps); });
    if (p.m.ok() && mode != MeasureMode::kTimeOnly)
      attempt(p, [&] { measure_outputs(in, p, mode == MeasureMode::kTimed, true); });
  }
  return std::move(p.m);
}

}  // namespace kperf
