// One configuration through the runner: its build, buffers and launch steps, the attempt that
// turns an exception or a lost device into the row's status, and its bandwidth.

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

}  // namespace

std::optional<Verdict> check_built_kernel(const cl::Kernel& kernel, const ClEnv& env, WorkGroup wg,
                                          ResultRow::KernelInfo& info) {
  const DeviceInfo& dev = env.info();
  info.max_work_group_size = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env.device());
  info.private_mem_bytes = kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(env.device());
  info.local_mem_bytes = kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(env.device());
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  // KPERF_LAUNCH_PAST_KERNEL_WG=1 launches such a shape anyway, so that the launch itself (ok,
  // or run_failed with its error) says whether the driver's figure binds.
  static const bool launch_past_kernel_wg = std::getenv("KPERF_LAUNCH_PAST_KERNEL_WG") != nullptr;
  if (items > info.max_work_group_size && !launch_past_kernel_wg)
    return Verdict{"invalid_config", "work-group of " + std::to_string(items) +
                                         " work-items exceeds this kernel's "
                                         "CL_KERNEL_WORK_GROUP_SIZE " +
                                         std::to_string(info.max_work_group_size)};
  if (info.local_mem_bytes > dev.local_mem_size)
    return Verdict{"invalid_config", "kernel needs " + std::to_string(info.local_mem_bytes) +
                                         " bytes of local memory; device has " +
                                         std::to_string(dev.local_mem_size)};
  return std::nullopt;
}

unsigned build_threads(const DeviceInfo& dev) {
  // Oclgrind builds on the calling thread only: its uninitialised-value checker writes a program's
  // program-scope variables through a memory pool that exists on the threads it made, and a build
  // on another thread crashes it (bilateral's weight table, about one run in three with two
  // threads).
  if (dev.platform_name.find("Oclgrind") != std::string::npos) return 1;
  return std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
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
  return kperf::device_responds(env_, why);
}

bool injected_launch_fault(const std::string& key, const std::string& stage) {
  if (fault_hits("crash", key, stage)) {
    std::signal(SIGSEGV, SIG_DFL);  // as the driver's own crash: no handler between
    std::raise(SIGSEGV);
  }
  if (fault_hits("cl-error", key, stage))
    throw cl::Error(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel (injected: KPERF_FAULT=cl-error)");
  return fault_hits("lose-queue", key, stage);
}

void Runner::injected_launch_fault(const std::string& key) {
  if (kperf::injected_launch_fault(key, cfg_.journal_fields.value("stage", std::string()))) {
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
    ResultRow::KernelInfo info;
    verdict = check_built_kernel(kernel, env_, wg, info);
    row.kernel_info = info;
    if (verdict) return;
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
