// A chain's outputs in the measuring core (core.hpp): a run into NaN-poisoned outputs in canary
// bands (under the test hook, every element a stage does not read poisoned too), the bands
// checked, each stage's output measured against its truth (on the device where the truth is
// there, else read back), outputs non-finite where the truth is finite refused, and a racing
// chain measured over several runs.
#include <limits>

#include "core.hpp"
#include "core_impl.hpp"
#include "fused_program.hpp"
#include "fused_rows.hpp"
#include "kernel_axes.hpp"
#include "phases.hpp"
#include "storage.hpp"

namespace kperf {

namespace {

constexpr const char* kGuardsOverwritten =
    "kernel wrote outside its output buffer (canary band overwritten)";

// The halo of the tile that reads a stage's input: its radius, or for a fused chain's first stage
// every stage's.
int input_radius(const Chain& chain, std::size_t k) {
  return is_fused(chain) && k == 0 ? fused_tile_halo(chain) : chain[k].app->radius;
}

// NaN in every element of `values` that stage k does not read.
void poison_unread(std::vector<float>& values, const Chain& chain, std::size_t k, int width,
                   int height) {
  const auto read = fuse_rows(chain) && k == 0
                        ? rolling_elements_read(chain, width, height)
                        : elements_read_by_any(chain[k].variant, input_radius(chain, k),
                                               chain[k].wg, width, height);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!read[i]) values[i] = std::numeric_limits<float>::quiet_NaN();
}

std::vector<float> read_back(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t n,
                             const StorageType& type) {
  std::vector<unsigned char> bytes(n * type.bytes);
  q.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
  std::vector<float> values(n);
  type.decode(bytes.data(), values.data(), n);
  return values;
}

// One run of every launch in order, from outputs reset. Under the test hook the first launch
// reads a poisoned copy of the input, and each later one a poisoned copy of what it reads (each
// earlier stage's output is kept as it was written).
void run_once(ClEnv& env, bool poison, const BoundInput& in, Prepared& p) {
  auto& q = env.queue();
  const std::size_t n = static_cast<std::size_t>(in.width) * in.height;
  const Chain& chain = p.chain;
  std::optional<cl::Buffer> dirty_buffer;
  std::optional<cl::Image2D> dirty_image;
  const bool hook = poison && !p.launches.front().sample.ping_pong();
  if (hook) {
    Grid dirty = in.input;
    poison_unread(dirty.data, chain, 0, in.width, in.height);
    std::vector<unsigned char> bytes = make_input(chain[0].variant, input_radius(chain, 0), dirty);
    dirty_buffer.emplace(env.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes.size(),
                         bytes.data());
    cl::Kernel& first = p.launches.front().steps.front().app;
    if (p.input->image) {
      dirty_image.emplace(
          env.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
          cl::ImageFormat(CL_R, chain[0].variant.precision_info().in->image_channel_type),
          static_cast<std::size_t>(p.input->layout.width),
          static_cast<std::size_t>(p.input->layout.height), 0, bytes.data());
      first.setArg(0, *dirty_image);
    } else {
      first.setArg(0, *dirty_buffer);
    }
  }
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    LaunchSetup& l = p.launches[i];
    l.sample.enqueue(q, nullptr);
    if (hook && i + 1 < p.launches.size()) {
      std::vector<float> dirty = read_back(q, l.output, n, *l.out_type);
      p.m.stages[l.stage].output = dirty;
      poison_unread(dirty, chain, l.stage + 1, in.width, in.height);
      std::vector<unsigned char> bytes(n * l.out_type->bytes);
      l.out_type->encode(dirty.data(), bytes.data(), n);
      q.enqueueWriteBuffer(l.output, CL_TRUE, 0, bytes.size(), bytes.data());
    }
  }
  q.finish();
}

bool guards_intact(cl::CommandQueue& q, const std::vector<std::unique_ptr<OutputBuffers>>& outputs,
                   Prepared& p) {
  for (const LaunchSetup& l : p.launches)
    for (int b : l.sample.ping_pong() ? std::vector<int>{0, 1} : std::vector<int>{0})
      if (!outputs[l.stage]->guards_intact_on_device(q, b, *l.out_type)) {
        const bool fused = is_fused(p.chain);
        const int stage = fused ? -1 : static_cast<int>(l.stage);
        p.m.fail(Status::kRunFailed,
                 (fused ? std::string("the fused kernel: ") : stage_prefix(p.chain, stage)) +
                     kGuardsOverwritten,
                 stage);
        return false;
      }
  return true;
}

}  // namespace

unsigned char* Core::Impl::staging(const cl::Context& context, cl::CommandQueue& queue,
                                   std::size_t bytes) {
  if (bytes > stage_bytes) {
    unmap_staging(queue);
    stage = cl::Buffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes);
    stage_ptr = static_cast<unsigned char*>(
        queue.enqueueMapBuffer(stage, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
    stage_bytes = bytes;
  }
  return stage_ptr;
}

void Core::Impl::unmap_staging(cl::CommandQueue& queue) {
  if (!stage_ptr) return;
  queue.enqueueUnmapMemObject(stage, stage_ptr);
  queue.finish();
  stage_ptr = nullptr;
  stage_bytes = 0;
}

std::vector<float> Core::read_output(const LaunchSetup& l, std::size_t n) {
  PhaseTimer timer(phases_, "download");
  const std::size_t bytes = n * l.out_type->bytes;
  unsigned char* copy = impl_->staging(env_.context(), env_.queue(), bytes);
  env_.queue().enqueueReadBuffer(l.output, CL_TRUE, 0, bytes, copy);
  std::vector<float> values(n);
  l.out_type->decode(copy, values.data(), n);
  return values;
}

// Launch l's output against its stage's truth where `measured`, read back where the host needs it.
bool Core::stage_errors(BoundInput& in, Prepared& p, LaunchSetup& l, bool measured) {
  const std::size_t k = l.stage;
  StageMeasurement& sm = p.m.stages[k];
  const std::size_t n = static_cast<std::size_t>(in.width) * in.height;
  const bool on_device = k < in.truth_on_device.size() && in.truth_on_device[k];
  if (sm.output.empty() && (opt_.read_outputs || (measured && !on_device)))
    sm.output = read_output(l, n);
  if (!measured) return true;
  PhaseTimer timer(phases_, "metrics");
  const GridD& truth = in.truths[k];
  const ErrorMetrics e =
      on_device ? impl_->metrics[k]->compute(l.output, *l.out_type, opt_.ssim)
                : compute_errors(truth.data, sm.output, in.width, in.height, opt_.ssim);
  // Where the input is finite, an output that is non-finite where the truth is finite was never
  // written, or computed from values never loaded: not a measurement.
  if (in.input_finite && e.nonfinite > in.truth_nonfinite[k]) {
    p.m.fail(Status::kRunFailed,
             stage_prefix(p.chain, static_cast<int>(k)) +
                 std::to_string(e.nonfinite - in.truth_nonfinite[k]) + " of " +
                 std::to_string(static_cast<long long>(n)) +
                 " outputs are non-finite where the accurate output is finite (never written, "
                 "computed from values never loaded, or overflowed)",
             static_cast<int>(k));
    return false;
  }
  sm.errors = e;
  return true;
}

bool Core::measure_outputs(BoundInput& in, Prepared& p, bool every_stage, bool rerun) {
  launch_fault(p);
  const Chain& chain = p.chain;
  bool racing = false;
  for (const PipelineStage& s : chain) racing = racing || races(s.variant);
  // A racing chain's outputs may differ from run to run: the last stage's primary error of
  // several independent runs is kept, each from freshly poisoned outputs.
  constexpr int kRelaxedRuns = 5;
  for (int run = 0; run < (racing ? kRelaxedRuns : 1); ++run) {
    if (rerun || run > 0 || opt_.poison_unread) {
      PhaseTimer timer(phases_, "download");
      for (StageMeasurement& s : p.m.stages) s.output.clear();
      reset_outputs(in, p);
      run_once(env_, opt_.poison_unread, in, p);
    }
    bool intact = false;
    {
      PhaseTimer timer(phases_, "download");
      intact = guards_intact(env_.queue(), outputs_, p);
    }
    if (!intact) return false;
    for (LaunchSetup& l : p.launches) {
      const bool measured = in.truthful() && (every_stage || l.stage + 1 == chain.size());
      if (!stage_errors(in, p, l, measured)) return false;
    }
    StageMeasurement& last = p.m.stages.back();
    if (racing && last.errors)
      last.error_reps.push_back(last.errors->value(chain.back().app->primary_metric));
  }
  return true;
}

}  // namespace kperf
