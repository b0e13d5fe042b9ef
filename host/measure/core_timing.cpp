// Timing a chain in the measuring core (core.hpp): the launches of a sample and the fill kernel's
// geometry, outputs reset before a run, warm-up, and batches of samples timed with profiling
// events (a stage's time the sum of its launches' events, the sample's the sum of every
// launch's), --max-cv's extra batches.
#include <algorithm>

#include "core.hpp"
#include "core_impl.hpp"
#include "injected_faults.hpp"
#include "phases.hpp"
#include "storage.hpp"

namespace kperf {

std::atomic<bool>& interrupt_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

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

void Core::reset_outputs(const BoundInput& in, Prepared& p) {
  auto& q = env_.queue();
  for (const LaunchSetup& l : p.launches) {
    OutputBuffers& out = *outputs_[l.stage];
    if (l.sample.ping_pong()) {
      // An iterated app starts from its initial state in buffer 0 each time.
      const StorageType& in_type = *p.chain[l.stage].variant.precision_info().in;
      const std::vector<unsigned char>& start = in.in_init[storage_index(in_type)];
      q.enqueueWriteBuffer(out.parent(0), CL_TRUE, 0, out.bytes(*l.out_type), start.data());
      out.poison(q, 1, *l.out_type);
    } else {
      out.poison(q, 0, *l.out_type);
    }
  }
}

void Core::time(BoundInput& in, Prepared& p, int samples) {
  auto& q = env_.queue();
  PhaseTimer launch_timer(phases_, "timed_launches");
  launch_fault(p);
  reset_outputs(in, p);
  Measurement& m = p.m;
  // Warm-up counts launches: an iterated sample is `iterations` launches already, so it warms up
  // with whole samples until at least that many launches ran.
  const int per_warmup = p.launches.front().sample.launches;
  const int warmup_samples = (opt_.warmup + per_warmup - 1) / per_warmup;
  for (int i = 0; i < warmup_samples; ++i) {
    for (const LaunchSetup& l : p.launches) l.sample.enqueue(q, nullptr);
    if (i % 8 == 7) {
      q.finish();
      if (interrupt_requested()) throw Abandoned{};
    }
  }
  q.finish();
  // A fused chain's one launch is no stage's alone: the chain's time only.
  const bool per_stage = p.launches.size() == p.chain.size() && p.chain.size() > 1;
  // Batches of samples, each enqueued whole and then read; with --max-cv more batches follow
  // until the samples are quiet enough or max_reps is reached.
  auto time_batch = [&](int count) {
    std::vector<std::vector<cl::Event>> events(p.launches.size());
    for (int r = 0; r < count; ++r) {
      // Cold: the in-order queue finishes overwriting a buffer larger than the cache before the
      // sample starts, so its first launch finds none of its data cached.
      if (flush_bytes_)
        q.enqueueFillBuffer(flush_, static_cast<cl_uint>(m.samples_ns.size() + r + 1), 0,
                            flush_bytes_);
      for (std::size_t i = 0; i < p.launches.size(); ++i)
        p.launches[i].sample.enqueue(q, &events[i]);
    }
    q.finish();
    if (interrupt_requested()) throw Abandoned{};
    if (opt_.stamp_rounds && !events[0].empty())
      m.round_start_ns.push_back(events[0].front().getProfilingInfo<CL_PROFILING_COMMAND_START>());
    for (int r = 0; r < count; ++r) {
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < p.launches.size(); ++i) {
        const int per_sample = p.launches[i].sample.events();
        std::uint64_t t = 0;
        for (int e = 0; e < per_sample; ++e) {
          cl::Event& ev = events[i][static_cast<std::size_t>(r) * per_sample + e];
          t += ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
               ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
        }
        if (per_stage) m.stages[p.launches[i].stage].samples_ns.push_back(t);
        total += t;
      }
      m.samples_ns.push_back(total);
    }
    m.time = summarize(m.samples_ns);
  };
  time_batch(samples);
  if (opt_.max_cv > 0) {
    const std::size_t cap = static_cast<std::size_t>(std::max(opt_.max_reps, opt_.reps));
    while (m.time->cv > opt_.max_cv && m.samples_ns.size() < cap)
      time_batch(static_cast<int>(std::min<std::size_t>(opt_.reps, cap - m.samples_ns.size())));
    m.stop_reason = m.time->cv <= opt_.max_cv ? "cv" : "max_reps";
  }
}

}  // namespace kperf
