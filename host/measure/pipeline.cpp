// Pipelines (pipeline.hpp): chains of image apps on one device, timed stage by stage with
// profiling events, their outputs read back for the chained truth.
#include "pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "device_input.hpp"
#include "runner.hpp"
#include "runner_internal.hpp"
#include "storage.hpp"
#include "strings.hpp"

namespace kperf {

namespace fs = std::filesystem;

const std::vector<std::pair<std::string, std::vector<std::string>>>& named_pipelines() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> named = {
      {"blur-edges", {"gaussian5", "sobel3"}}, {"denoise-edges", {"median", "sobel3"}}};
  return named;
}

std::vector<const AppDescriptor*> parse_pipeline(const std::string& text) {
  std::vector<std::string> names;
  for (const auto& [name, apps] : named_pipelines())
    if (name == text) names = apps;
  if (names.empty()) names = split_list(text);
  std::vector<const AppDescriptor*> apps;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string where = "--pipeline " + text + ": stage " + std::to_string(i + 1);
    const AppDescriptor* app = nullptr;
    try {
      app = &find_app(names[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    if (!app->takes_images() || app->traits.iterated || app->traits.second_input)
      throw std::invalid_argument(where + " (" + app->name +
                                  ") cannot connect: a stage reads one image and writes one");
    apps.push_back(app);
  }
  if (apps.size() < 2) {
    std::string known;
    for (const auto& [name, chain] : named_pipelines()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("--pipeline " + text + ": a chain of two or more apps (" + known +
                                ", or APP,APP[,...])");
  }
  return apps;
}

const StorageType& intermediate_type(const Variant& prev) { return *prev.precision_info().out; }

std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next) {
  const StorageType &out = intermediate_type(prev), &in = *next.precision_info().in;
  if (&out != &in)
    return std::string("the stage before stores ") + out.name + " and this stage reads " + in.name +
           " (" + next.precision_info().name + "): the buffer between is one type";
  if (next.host_perforate)
    return std::string("host perforation packs the input on the host; this stage's input is on ") +
           "the device";
  if (next.load_path().reads_image)
    return std::string("the image load path reads an image; this stage's input is a buffer");
  return std::nullopt;
}

PipelineRunner::PipelineRunner(ClEnv& env, PipelineOptions options)
    : env_(env), opt_(std::move(options)) {
  if (opt_.cold) {
    flush_bytes_ = cold_flush_bytes(env_.info());
    flush_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, flush_bytes_);
  }
}

namespace {

// One stage set up to launch: its program, kernels, output buffer and launch geometry.
struct StageSetup {
  cl::Program program;
  std::vector<LaunchStep> steps;
  SampleLaunches sample;
  cl::Buffer output;
  std::size_t output_bytes = 0;
  const StorageType* out_type = nullptr;
};

bool lost_device(const cl::Error& e) {
  return e.err() == CL_INVALID_COMMAND_QUEUE || e.err() == CL_OUT_OF_RESOURCES ||
         e.err() == CL_INVALID_CONTEXT;
}

// Fills a buffer of `type` with NaN (poisoned, so that an output left unwritten shows).
void poison(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t bytes,
            const StorageType& type) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (type.bytes == 4) {
    q.enqueueFillBuffer(buffer, nan, 0, bytes);
  } else {
    std::uint16_t half = 0;
    type.encode(&nan, &half, 1);
    q.enqueueFillBuffer(buffer, half, 0, bytes);
  }
}

std::vector<float> read_back(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t n,
                             const StorageType& type) {
  std::vector<unsigned char> bytes(n * type.bytes);
  q.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
  std::vector<float> values(n);
  type.decode(bytes.data(), values.data(), n);
  return values;
}

// NaN in every element of `values` that a stage under (v, wg) of `app` does not read.
void poison_unread(std::vector<float>& values, const PipelineStage& stage, int width, int height) {
  const auto read = elements_read_by_any(stage.variant, stage.app->radius, stage.wg, width, height);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!read[i]) values[i] = std::numeric_limits<float>::quiet_NaN();
}

// Builds stage `s` and sets up its launches, reading `previous` (or `image`) and writing a new
// NaN-poisoned output buffer. Returns why it cannot run (status, reason), or nothing.
std::optional<std::pair<std::string, std::string>> set_up_stage(
    ClEnv& env, const PipelineOptions& opt, const PipelineStage& s, int width, int height,
    const cl::Image2D* image, const cl::Buffer& previous, StageSetup& st, std::string& build_log) {
  const std::size_t n = static_cast<std::size_t>(width) * height;
  const std::string options = kernel_build_options(*s.app, s.variant, s.wg, opt.kernel_root,
                                                   opt.params, opt.extra_build_options);
  try {
    st.program = env.build(
        read_file((fs::path(opt.kernel_root) / "kernels" / s.app->kernel_file).string()), options);
  } catch (const BuildError& e) {
    build_log = e.log();
    return std::make_pair(std::string("build_failed"),
                          std::string(e.what()) + " (options: " + options + ")");
  }
  cl::Kernel kernel(st.program, "kperf_app");
  const std::size_t items = static_cast<std::size_t>(s.wg.x) * s.wg.y;
  const auto kernel_wg = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env.device());
  if (items > kernel_wg)
    return std::make_pair(std::string("invalid_config"),
                          "work-group of " + std::to_string(items) +
                              " work-items exceeds this kernel's CL_KERNEL_WORK_GROUP_SIZE " +
                              std::to_string(kernel_wg));
  st.out_type = s.variant.precision_info().out;
  st.output_bytes = n * st.out_type->bytes;
  st.output = cl::Buffer(env.context(), CL_MEM_READ_WRITE, st.output_bytes);
  LaunchStep step{kernel, std::nullopt};
  if (image)
    step.app.setArg(0, *image);
  else
    step.app.setArg(0, previous);
  step.app.setArg(1, st.output);
  step.app.setArg(2, static_cast<cl_int>(width));
  step.app.setArg(3, static_cast<cl_int>(height));
  if (!s.variant.output.none() && s.variant.fill().launches > 1) {
    step.fill = cl::Kernel(st.program, "kperf_output_fill");
    step.fill->setArg(0, st.output);
    step.fill->setArg(1, static_cast<cl_int>(width));
    step.fill->setArg(2, static_cast<cl_int>(height));
  }
  st.steps.push_back(step);
  const cl::NDRange global(
      static_cast<std::size_t>(groups_along_x(s.variant, s.wg, width)) * s.wg.x,
      static_cast<std::size_t>(groups_along_y(s.variant, s.wg, height)) * s.wg.y);
  const cl::NDRange local(static_cast<std::size_t>(s.wg.x), static_cast<std::size_t>(s.wg.y));
  st.sample = make_sample_launches(env, s.variant, width, height, st.steps, global, local, 1);
  poison(env.queue(), st.output, st.output_bytes, *st.out_type);
  return std::nullopt;
}

// Warm-up, then samples: every stage in order on one queue, each stage's launches its own
// events; a stage's time is the sum of its events, the chain's the sum of its stages'.
void time_chain(cl::CommandQueue& q, const PipelineOptions& opt, std::vector<StageSetup>& setups,
                const cl::Buffer* flush, std::size_t flush_bytes, ChainOutcome& out) {
  for (int i = 0; i < opt.warmup; ++i)
    for (auto& st : setups) st.sample.enqueue(q, nullptr);
  q.finish();
  for (int r = 0; r < opt.reps; ++r) {
    if (flush) q.enqueueFillBuffer(*flush, static_cast<cl_uint>(r + 1), 0, flush_bytes);
    std::vector<std::vector<cl::Event>> events(setups.size());
    for (std::size_t k = 0; k < setups.size(); ++k) setups[k].sample.enqueue(q, &events[k]);
    q.finish();
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < setups.size(); ++k) {
      std::uint64_t t = 0;
      for (auto& ev : events[k])
        t += ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
             ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      out.stages[k].samples_ns.push_back(t);
      total += t;
    }
    out.total_ns.push_back(total);
  }
}

}  // namespace

ChainOutcome PipelineRunner::run(const std::vector<PipelineStage>& chain, const Grid& input) {
  ChainOutcome out;
  out.stages.resize(chain.size());
  auto fail = [&](int stage, const std::string& status, const std::string& reason) {
    out.status = status;
    out.failed_stage = stage;
    out.reason = (stage >= 0 ? "stage " + std::to_string(stage + 1) + " (" +
                                   chain[static_cast<std::size_t>(stage)].app->name + "): "
                             : std::string()) +
                 reason;
    return out;
  };
  if (!lost_by_.empty())
    return fail(-1, "device_fault", "not measured: the device was lost by " + lost_by_);
  const int width = input.width, height = input.height;
  const std::size_t n = static_cast<std::size_t>(width) * height;
  const DeviceInfo& dev = env_.info();
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    if (auto verdict = check_launch(*s.app, s.variant, s.wg, dev))
      return fail(static_cast<int>(k), verdict->status, verdict->reason);
    if (auto misfit = output_misfit(s.variant.output, width, height))
      return fail(static_cast<int>(k), "not_applicable", *misfit);
    if (k > 0)
      if (auto problem = stage_link_problem(chain[k - 1].variant, s.variant))
        return fail(static_cast<int>(k), "not_applicable", *problem);
  }
  std::vector<StageSetup> setups(chain.size());
  std::vector<unsigned char> first_input =
      make_input(chain[0].variant, chain[0].app->radius, input);
  cl::Buffer input_buffer;
  std::optional<cl::Image2D> input_image;
  auto& q = env_.queue();
  int stage = -1;
  try {
    const InputLayout layout = input_layout(chain[0].variant, chain[0].app->radius, width, height);
    input_buffer = cl::Buffer(env_.context(), CL_MEM_READ_ONLY, first_input.size());
    q.enqueueWriteBuffer(input_buffer, CL_TRUE, 0, first_input.size(), first_input.data());
    if (chain[0].variant.load_path().reads_image) {
      if (!dev.image_support) return fail(0, "not_applicable", "the device has no image support");
      input_image.emplace(
          env_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
          cl::ImageFormat(CL_R, chain[0].variant.precision_info().in->image_channel_type),
          static_cast<std::size_t>(layout.width), static_cast<std::size_t>(layout.height), 0,
          first_input.data());
    }
    for (std::size_t k = 0; k < chain.size(); ++k) {
      stage = static_cast<int>(k);
      const cl::Buffer* previous = k == 0 ? &input_buffer : &setups[k - 1].output;
      if (auto problem = set_up_stage(env_, opt_, chain[k], width, height,
                                      k == 0 && input_image ? &*input_image : nullptr, *previous,
                                      setups[k], out.stages[k].build_log))
        return fail(stage, problem->first, problem->second);
    }
    stage = -1;
    time_chain(q, opt_, setups, flush_ ? &*flush_ : nullptr, flush_bytes_, out);
    // The outputs of one chain run from poisoned buffers (and, under the test hook, with every
    // element a stage does not read poisoned).
    if (opt_.poison_unread) {
      Grid dirty = input;
      poison_unread(dirty.data, chain[0], width, height);
      const std::vector<unsigned char> bytes =
          make_input(chain[0].variant, chain[0].app->radius, dirty);
      if (input_image)
        q.enqueueWriteImage(*input_image, CL_TRUE, {0, 0, 0},
                            {static_cast<std::size_t>(width), static_cast<std::size_t>(height), 1},
                            0, 0, bytes.data());
      else
        q.enqueueWriteBuffer(input_buffer, CL_TRUE, 0, bytes.size(), bytes.data());
    }
    for (auto& st : setups) poison(q, st.output, st.output_bytes, *st.out_type);
    for (std::size_t k = 0; k < setups.size(); ++k) {
      stage = static_cast<int>(k);
      setups[k].sample.enqueue(q, nullptr);
      if (opt_.read_every_stage || opt_.poison_unread || k + 1 == setups.size())
        out.stages[k].output = read_back(q, setups[k].output, n, *setups[k].out_type);
      if (opt_.poison_unread && k + 1 < setups.size()) {
        std::vector<float> dirty = out.stages[k].output;
        poison_unread(dirty, chain[k + 1], width, height);
        std::vector<unsigned char> bytes(setups[k].output_bytes);
        setups[k].out_type->encode(dirty.data(), bytes.data(), n);
        q.enqueueWriteBuffer(setups[k].output, CL_TRUE, 0, bytes.size(), bytes.data());
      }
    }
    q.finish();
  } catch (const cl::Error& e) {
    if (lost_device(e)) {
      lost_by_ = "a chain whose " + (stage >= 0 ? "stage " + std::to_string(stage + 1) : "set-up") +
                 " raised " + describe(e);
      return fail(stage, "device_fault", describe(e));
    }
    return fail(stage, "run_failed", describe(e));
  }
  return out;
}

std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params) {
  std::vector<GridD> truth;
  GridD current = to_double(input.data, input.width, input.height);
  for (const AppDescriptor* app : apps) {
    current = reference_run(*app, current, nullptr, 1, params);
    truth.push_back(current);
  }
  return truth;
}

std::vector<GridD> chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                               const AppParams& params) {
  std::vector<GridD> models;
  GridD current = to_double(input.data, input.width, input.height);
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    // The stage reads its input at its input type; the model holds the value the buffer holds.
    const StorageType& in = *s.variant.precision_info().in;
    for (double& x : current.data) x = in.round(static_cast<double>(static_cast<float>(x)));
    current = model_run(*s.app, s.variant, s.wg, current, nullptr, 1, params);
    models.push_back(current);
  }
  return models;
}

}  // namespace kperf
