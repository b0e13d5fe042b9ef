// Timing one configuration: the launches of a sample (and the fill kernel's geometry), warm-up,
// batches of profiled samples (--max-cv adds batches), and --transfers' end-to-end repetitions.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "runner_internal.hpp"
#include "stats.hpp"

namespace kperf {

void SampleLaunches::enqueue(cl::CommandQueue& queue, std::vector<cl::Event>* events) const {
  auto launch = [&](cl::Kernel& k, const cl::NDRange& g, const cl::NDRange& l) {
    if (events) {
      events->emplace_back();
      queue.enqueueNDRangeKernel(k, cl::NullRange, g, l, nullptr, &events->back());
    } else {
      queue.enqueueNDRangeKernel(k, cl::NullRange, g, l);
    }
  };
  for (int it = 0; it < launches; ++it) {
    LaunchStep& step = (*steps)[static_cast<std::size_t>(it) % steps->size()];
    launch(step.app, global, local);
    if (step.fill) launch(*step.fill, fill_global, fill_local);
  }
}

namespace {

// Host memory allocated by the runtime (CL_MEM_ALLOC_HOST_PTR) and mapped once, for as long as
// the object lives.
class PinnedMemory {
 public:
  PinnedMemory(const cl::Context& context, cl::CommandQueue& queue, std::size_t bytes)
      : queue_(queue), buffer_(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes) {
    data_ = static_cast<unsigned char*>(
        queue_.enqueueMapBuffer(buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
  }
  ~PinnedMemory() {
    try {
      queue_.enqueueUnmapMemObject(buffer_, data_);
      queue_.finish();
    } catch (const cl::Error&) {
    }
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  unsigned char* data() const { return data_; }

 private:
  cl::CommandQueue& queue_;
  cl::Buffer buffer_;
  unsigned char* data_ = nullptr;
};

}  // namespace

SampleLaunches Runner::sample_launches(const Variant& v, const Workload& w,
                                       std::vector<LaunchStep>& steps, const cl::NDRange& global,
                                       const cl::NDRange& local, int launches) const {
  return make_sample_launches(env_, v, w.width, w.height, steps, global, local, launches);
}

SampleLaunches make_sample_launches(const ClEnv& env, const Variant& v, int width, int height,
                                    std::vector<LaunchStep>& steps, const cl::NDRange& global,
                                    const cl::NDRange& local, int launches) {
  SampleLaunches s;
  s.steps = &steps;
  s.global = global;
  s.local = local;
  s.launches = steps.size() > 1 ? launches : 1;
  // The fill kernel's launch (output_grid.cl): rows:K walks the missing rows with 4 outputs per
  // work-item, cols:K the missing columns, center:K every output; 64 x 4 groups where they fit.
  constexpr std::size_t kFillX = 64, kFillY = 4;
  auto missing = [](int n, int k) { return k == 1 ? n : n - (n - k / 2 + k - 1) / k; };
  const int ky = v.output.ky(), kx = v.output.kx();
  const std::size_t fill_x = kx == 1 && ky > 1
                                 ? (static_cast<std::size_t>(width) + 3) / 4
                                 : static_cast<std::size_t>(ky == 1 ? missing(width, kx) : width);
  const std::size_t fill_y = static_cast<std::size_t>(kx == 1 ? missing(height, ky) : height);
  s.fill_global = cl::NDRange((fill_x + kFillX - 1) / kFillX * kFillX,
                              (std::max<std::size_t>(1, fill_y) + kFillY - 1) / kFillY * kFillY);
  s.fill_local = cl::NullRange;
  const DeviceInfo& dev = env.info();
  if (steps[0].fill &&
      steps[0].fill->getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env.device()) >= kFillX * kFillY &&
      dev.max_work_item_sizes.size() >= 2 && dev.max_work_item_sizes[0] >= kFillX &&
      dev.max_work_item_sizes[1] >= kFillY)
    s.fill_local = cl::NDRange(kFillX, kFillY);
  return s;
}

void Runner::reset_outputs(const Workload& w, const Variant& v, const SampleLaunches& sample) {
  auto& q = env_.queue();
  const StorageType& out_type = *v.precision_info().out;
  if (sample.ping_pong()) {
    // Hotspot starts from its initial temperature in buffer 0 each time.
    const StorageType& in_type = *v.precision_info().in;
    const std::vector<unsigned char>& start = w.in_init[storage_index(in_type)];
    q.enqueueWriteBuffer(w.buf->out.parent(0), CL_TRUE, 0, w.buf->out.bytes(out_type),
                         start.data());
    w.buf->out.poison(q, 1, out_type);
  } else {
    w.buf->out.poison(q, 0, out_type);
  }
}

void Runner::rerun_sample(const Workload& w, const Variant& v, const SampleLaunches& sample) {
  reset_outputs(w, v, sample);
  sample.enqueue(env_.queue(), nullptr);
  env_.queue().finish();
}

void Runner::time_samples(const Workload& w, const Variant& v, ResultRow& row,
                          const SampleLaunches& sample, int samples) {
  auto& q = env_.queue();
  PhaseTimer launch_timer(phase_s_, "timed_launches");
  injected_launch_fault(row.key);
  reset_outputs(w, v, sample);
  // --warmup counts launches: an iterated sample is `iterations` launches already, so it warms up
  // with whole samples until at least that many launches ran.
  const int warmup_samples = (cfg_.warmup + sample.launches - 1) / sample.launches;
  for (int i = 0; i < warmup_samples; ++i) {
    sample.enqueue(q, nullptr);
    if (i % 8 == 7) {
      q.finish();
      if (interrupt_requested()) throw Abandoned{};
    }
  }
  q.finish();
  const int per_sample = sample.events();
  // Batches of samples, each enqueued whole and then read; with --max-cv more batches
  // follow until the samples are quiet enough or --max-reps is reached.
  auto time_batch = [&](int count) {
    std::vector<cl::Event> events;
    events.reserve(static_cast<std::size_t>(count) * per_sample);
    for (int r = 0; r < count; ++r) {
      // --cold: the in-order queue finishes overwriting a buffer larger than the cache before
      // the sample starts, so its first launch finds none of its data cached.
      if (flush_bytes_)
        q.enqueueFillBuffer(flush_, static_cast<cl_uint>(row.samples_ns.size() + r + 1), 0,
                            flush_bytes_);
      sample.enqueue(q, &events);
    }
    q.finish();
    if (interrupt_requested()) throw Abandoned{};
    // Under --rounds each round's first launch is dated on the device's clock, so that the
    // rounds of all configurations can be laid out in time.
    if (cfg_.rounds > 1 && !events.empty())
      row.round_start_ns.push_back(events.front().getProfilingInfo<CL_PROFILING_COMMAND_START>());
    for (int r = 0; r < count; ++r) {
      std::uint64_t total = 0;
      for (int it = 0; it < per_sample; ++it) {
        cl::Event& ev = events[static_cast<std::size_t>(r) * per_sample + it];
        total += ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                 ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      }
      row.samples_ns.push_back(total);
    }
    row.time = summarize(row.samples_ns);
  };
  time_batch(samples);
  if (cfg_.max_cv > 0) {
    const std::size_t cap = static_cast<std::size_t>(std::max(cfg_.max_reps, cfg_.reps));
    while (row.time->cv > cfg_.max_cv && row.samples_ns.size() < cap)
      time_batch(static_cast<int>(std::min<std::size_t>(cfg_.reps, cap - row.samples_ns.size())));
    row.stop_reason = row.time->cv <= cfg_.max_cv ? "cv" : "max_reps";
  }
}

void Runner::time_transfers(Workload& w, const Variant& v, ResultRow& row,
                            const SampleLaunches& sample, DeviceUpload& input) {
  auto& q = env_.queue();
  auto& ctx = env_.context();
  // An iterated app uploads into its first output buffer; a second input (power) follows.
  const bool iterated = w.app->traits.iterated, second = w.app->traits.second_input;
  const StorageType& in_type = *v.precision_info().in;
  const StorageType& out_type = *v.precision_info().out;
  const std::size_t n = static_cast<std::size_t>(w.width) * w.height;
  const std::size_t up_bytes = input.host.size();
  const std::size_t power_bytes = second ? n * in_type.bytes : 0;
  const std::size_t down_bytes = n * out_type.bytes;
  // Pinned host memory, as a GPU user would transfer from.
  const PinnedMemory pinned_up(ctx, q, up_bytes + power_bytes), pinned_down(ctx, q, down_bytes);
  unsigned char *up = pinned_up.data(), *down = pinned_down.data();

  // f32 on the device: the input already sits in pinned memory, nothing to prepare per
  // repetition. Otherwise the host packs and/or converts it there each repetition, timed.
  const bool prepares = v.host_perforate || !in_type.is_float();
  auto prepare = [&] {
    write_input(v, w.app->radius, w.input, up);
    if (second && !in_type.is_float())
      in_type.encode(w.power->data.data(), up + up_bytes, n);
    else if (second)
      std::memcpy(up + up_bytes, w.power->data.data(), power_bytes);
  };
  if (!prepares) prepare();
  const cl::Buffer& upload_target = iterated ? w.buf->out.view(in_type, 0) : input.buffer;
  const cl::Buffer& final_output = w.buf->out.view(out_type, sample.final_buffer());
  auto duration = [](cl::Event& ev) {
    return ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
           ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  };
  constexpr int kWarmup = 2;
  for (int rep = -kWarmup; rep < cfg_.reps; ++rep) {
    if (interrupt_requested()) throw Abandoned{};
    // The packing's yardstick: a plain memcpy of the bytes it writes, into the same memory.
    // Its floor: the grid lines it must read, read alone (no packing of them takes less).
    std::uint64_t copy_ns = 0, read_lines_ns = 0;
    std::size_t read_bytes = 0;
    if (prepares) {
      auto since = [](std::chrono::steady_clock::time_point t) {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - t)
                                              .count());
      };
      const auto c0 = std::chrono::steady_clock::now();
      parallel_memcpy(up, w.input.data.data(), std::min(up_bytes + power_bytes, n * sizeof(float)));
      copy_ns = since(c0);
      float sink = 0;
      const auto r0 = std::chrono::steady_clock::now();
      read_bytes = read_source_lines(v, w.app->radius, w.input, &sink);
      read_lines_ns = since(r0);
      volatile float keep = sink;  // the loads feed a value that is kept
      (void)keep;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (prepares) prepare();
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<cl::Event> writes(second ? 2 : 1), kernels;
    cl::Event read;
    if (v.load_path().reads_image)
      q.enqueueWriteImage(*input.image, CL_FALSE, {0, 0, 0},
                          {static_cast<std::size_t>(input.layout.width),
                           static_cast<std::size_t>(input.layout.height), 1},
                          0, 0, up, nullptr, &writes[0]);
    else
      q.enqueueWriteBuffer(upload_target, CL_FALSE, 0, up_bytes, up, nullptr, &writes[0]);
    if (second)
      q.enqueueWriteBuffer(w.buf->power[storage_index(in_type)], CL_FALSE, 0, power_bytes,
                           up + up_bytes, nullptr, &writes[1]);
    sample.enqueue(q, &kernels);
    q.enqueueReadBuffer(final_output, CL_FALSE, 0, down_bytes, down, nullptr, &read);
    q.finish();
    if (rep < 0) continue;
    const std::uint64_t pack =
        prepares ? static_cast<std::uint64_t>(
                       std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count())
                 : 0;
    std::uint64_t write = 0, kernel = 0;
    for (auto& ev : writes) write += duration(ev);
    for (auto& ev : kernels) kernel += duration(ev);
    const std::uint64_t read_ns = duration(read);
    row.transfer_samples.write.push_back(write);
    row.transfer_samples.read.push_back(read_ns);
    row.transfer_samples.host_pack.push_back(pack);
    if (prepares) {
      row.transfer_samples.host_memcpy.push_back(copy_ns);
      row.transfer_samples.host_bytes = std::min(up_bytes + power_bytes, n * sizeof(float));
      row.transfer_samples.host_read_lines.push_back(read_lines_ns);
      row.transfer_samples.host_read_bytes = read_bytes;
    }
    row.transfer_samples.kernel.push_back(kernel);
    row.transfer_samples.end_to_end.push_back(pack + write + kernel + read_ns);
  }
}

void Runner::measure_idle_power() {
  PhaseTimer timer(phase_s_, "energy");
  EnergyMeter meter(*cfg_.energy, now_s, cfg_.energy_options);
  auto idle = []() -> long long {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 0;
  };
  std::string problem;
  const std::vector<EnergyWindow> windows = meter.measure(idle, problem);
  std::vector<double> watts;
  for (const EnergyWindow& w : windows) watts.push_back(w.joules / w.seconds);
  std::sort(watts.begin(), watts.end());
  idle_power_w_ = watts.empty() ? 0 : watts[watts.size() / 2];
  counter_period_s_ = meter.update_period_s();
  idle_problem_ = problem;
}

void Runner::measure_energy(const Workload& w, ResultRow& row, const SampleLaunches& sample) {
  row.energy_requested = true;
  if (!cfg_.energy) {
    row.energy_problem = "no energy counter on this device (see the context)";
    return;
  }
  PhaseTimer timer(phase_s_, "energy");
  if (auto c = cfg_.energy->clocks()) row.clocks = to_json(*c);
  if (idle_power_w_ == 0 && idle_problem_.empty()) measure_idle_power();
  // Batches of about 5 ms of samples, the counter read after each: short against the counter's
  // update period (100 ms on the H200). About 50 ms of batches stay queued behind the running
  // one, so the device does not idle while the host waits on an event or reads the counter (a
  // first version that finished the queue before each read kept an H200 busy about half the
  // window). Each row's busy_fraction says how well that worked.
  const double sample_s = row.time ? std::max(1e-9, row.time->median * 1e-9) : 1e-3;
  const long long batch = std::clamp<long long>(static_cast<long long>(5e-3 / sample_s), 1, 100000);
  constexpr std::size_t kQueuedBatches = 10;
  auto& q = env_.queue();
  std::deque<cl::Event> in_flight;
  auto enqueue_batch = [&] {
    for (long long i = 0; i < batch; ++i) sample.enqueue(q, nullptr);
    cl::Event done;
    q.enqueueMarkerWithWaitList(nullptr, &done);
    q.flush();
    in_flight.push_back(std::move(done));
  };
  auto work = [&]() -> long long {
    while (in_flight.size() < kQueuedBatches) enqueue_batch();
    in_flight.front().wait();  // one batch done, the next one running
    in_flight.pop_front();
    enqueue_batch();
    if (interrupt_requested()) throw Abandoned{};
    return batch;
  };
  EnergyMeter meter(*cfg_.energy, now_s, cfg_.energy_options);
  std::string problem;
  const std::vector<EnergyWindow> windows = meter.measure(work, problem);
  q.finish();
  const double outputs = static_cast<double>(w.width) * w.height;
  row.energy = kperf::energy_json(windows, idle_power_w_, outputs, cfg_.energy->source(),
                                  cfg_.energy_options.window_s, row.time ? sample_s : 0);
  row.energy_problem = problem;
}

}  // namespace kperf
