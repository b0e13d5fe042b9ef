// Pipelines (pipeline.hpp): chains of image apps on one device, timed stage by stage with profiling
// events, each stage's error measured against the chained truth.
#include "pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include "fault_journal.hpp"
#include "fused_model.hpp"
#include "inputs.hpp"
#include "parallel.hpp"
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

std::string stage_label(const PipelineStage& s) {
  return s.app->name + ":" + s.variant.id() + "@" + wg_label(s.wg.x, s.wg.y, s.wg.vec, s.wg.py);
}

std::string chain_key(const std::string& pipeline, const std::vector<PipelineStage>& chain,
                      const std::string& input, int width, int height) {
  std::string key = pipeline + (is_fused(chain) ? "/fused" : "");
  for (std::size_t k = 0; k < chain.size(); ++k)
    key += (k == 0 ? "/" : " > ") + stage_label(chain[k]);
  return key + "/" + input + "/" + std::to_string(width) + "x" + std::to_string(height);
}

const StorageType& intermediate_type(const Variant& prev) { return *prev.precision_info().out; }

std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next) {
  const StorageType &out = intermediate_type(prev), &in = *next.precision_info().in;
  if (&out != &in)
    return std::string("the stage before stores ") + out.name + " and this stage reads " + in.name +
           " (" + next.precision_info().name + "): the buffer between is one type";
  if (next.host_perforate)
    return std::string(
        "host perforation packs the input on the host; this stage's input is on the device");
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
  metrics_unsupported_ = DeviceMetrics::unsupported(env_.device());
}

void PipelineRunner::set_input(const std::string& name, const Grid& input,
                               const std::vector<GridD>* truth) {
  in_ = Bound{};
  in_.name = name;
  in_.grid = &input;
  in_.truth = truth;
  in_.finite = count_nonfinite(input.data) == 0;
  if (truth) {
    for (const GridD& t : *truth) {
      std::int64_t n = 0;
      for (double x : t.data) n += !std::isfinite(x);
      in_.truth_nonfinite.push_back(n);
    }
    in_.truth_on_device.assign(truth->size(), false);
  }
}

// One launch of a chain set up: its program, kernels, output buffer (in canary bands) and launch
// geometry. An unfused chain has one per stage; a fused chain one, writing the last stage's output.
struct PipelineRunner::StageSetup {
  std::size_t stage = 0;  // the stage whose output it writes
  cl::Program program;
  std::vector<LaunchStep> steps;
  SampleLaunches sample;
  const OutputBuffers* buffers = nullptr;
  cl::Buffer output;  // the buffers' interior at out_type
  std::size_t output_bytes = 0;
  const StorageType* out_type = nullptr;
};

namespace {

using StageSetup = PipelineRunner::StageSetup;

std::vector<float> read_back(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t n,
                             const StorageType& type) {
  std::vector<unsigned char> bytes(n * type.bytes);
  q.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
  std::vector<float> values(n);
  type.decode(bytes.data(), values.data(), n);
  return values;
}

// The halo of the tile that reads a stage's input: its radius, or for a fused chain's first stage
// every stage's.
int input_radius(const std::vector<PipelineStage>& chain, std::size_t k) {
  return is_fused(chain) && k == 0 ? fused_tile_halo(chain) : chain[k].app->radius;
}

// NaN in every element of `values` that stage k does not read.
void poison_unread(std::vector<float>& values, const std::vector<PipelineStage>& chain,
                   std::size_t k, int width, int height) {
  const auto read =
      elements_read_by_any(chain[k].variant, input_radius(chain, k), chain[k].wg, width, height);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!read[i]) values[i] = std::numeric_limits<float>::quiet_NaN();
}

// Binds the first stage's input (a buffer, or an image) to argument 0.
void set_input_arg(cl::Kernel& kernel, const cl::Buffer& buffer, const cl::Image2D* image) {
  if (image)
    kernel.setArg(0, *image);
  else
    kernel.setArg(0, buffer);
}

// Builds a launch of `s` (a stage, or a fused chain's last stage) from `source` with `options` and
// sets it up, reading `previous` (or `image`) and writing `st.output`. Returns why it cannot run
// (status, reason), or nothing.
std::optional<std::pair<std::string, std::string>> set_up_stage(
    ClEnv& env, const std::string& source, const std::string& options, const PipelineStage& s,
    int width, int height, const cl::Image2D* image, const cl::Buffer& previous, StageSetup& st,
    std::string& build_log) {
  try {
    st.program = env.build(source, options);
  } catch (const BuildError& e) {
    build_log = e.log();
    return std::make_pair(std::string("build_failed"),
                          std::string(e.what()) + " (options: " + options + ")");
  }
  cl::Kernel kernel(st.program, "kperf_app");
  ResultRow::KernelInfo info;
  if (auto verdict = check_built_kernel(kernel, env, s.wg, info))
    return std::make_pair(verdict->status, verdict->reason);
  LaunchStep step{kernel, std::nullopt};
  set_input_arg(step.app, previous, image);
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
  return std::nullopt;
}

// Warm-up, then samples: every stage in order on one queue, each stage's launches its own events; a
// stage's time is the sum of its events, the chain's the sum of its stages'.
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
      // A fused chain's one launch is no stage's alone: the chain's time only.
      if (setups.size() == out.stages.size()) out.stages[setups[k].stage].samples_ns.push_back(t);
      total += t;
    }
    out.total_ns.push_back(total);
  }
}

}  // namespace

const std::string& PipelineRunner::source_of(const AppDescriptor& app) {
  // A built-in's file lies in the kernel directory; a user app's path is absolute.
  const std::string file = (fs::path(opt_.kernel_root) / "kernels" / app.kernel_file).string();
  auto it = sources_.find(file);
  if (it == sources_.end()) it = sources_.emplace(file, read_file(file)).first;
  return it->second;
}

std::pair<std::string, std::string> PipelineRunner::program_of(
    const std::vector<PipelineStage>& chain, std::size_t k) {
  if (!is_fused(chain)) {
    const PipelineStage& s = chain[k];
    return {source_of(*s.app), kernel_build_options(*s.app, s.variant, s.wg, opt_.kernel_root,
                                                    opt_.params, opt_.extra_build_options)};
  }
  std::string id;
  for (const PipelineStage& s : chain) id += stage_label(s) + ">";
  auto it = fused_.find(id);
  if (it == fused_.end()) {
    const FusedProgram p =
        fused_program(chain, opt_.kernel_root, opt_.params, opt_.extra_build_options);
    it = fused_.emplace(id, std::make_pair(p.source, p.options)).first;
  }
  return it->second;
}

void PipelineRunner::prebuild(const std::vector<std::vector<PipelineStage>>& chains) {
  std::set<std::pair<std::string, std::string>> jobs;
  for (const auto& chain : chains) {
    if (is_fused(chain)) {
      if (!fused_chain_problem(chain)) jobs.insert(program_of(chain, chain.size() - 1));
      continue;
    }
    for (std::size_t k = 0; k < chain.size(); ++k) jobs.insert(program_of(chain, k));
  }
  // As Runner::prebuild: after a compiler crash here, each chain builds its stages under the
  // journal, where a crash is that chain's fault.
  if (journal_skip_prebuild()) return;
  journal_begin_prebuild(jobs.size());
  env_.prebuild({jobs.begin(), jobs.end()}, build_threads(env_.info()));
  journal_end();
}

const OutputBuffers& PipelineRunner::output_buffers(std::size_t k, int width, int height) {
  while (outputs_.size() <= k) outputs_.push_back(std::make_unique<OutputBuffers>());
  OutputBuffers& b = *outputs_[k];
  if (!b.sized(width, height)) b = OutputBuffers{};  // the old size's released first
  b.allocate(env_.context(), width, height, guard_bytes_for(env_.info()), 1);
  return b;
}

bool PipelineRunner::measures_on_device(std::size_t k) {
  if (metrics_unsupported_ || !in_.truth) return false;
  if (metrics_.size() <= k) metrics_.resize(k + 1);
  if (!metrics_[k]) metrics_[k] = std::make_unique<DeviceMetrics>(env_, opt_.kernel_root);
  if (!in_.truth_on_device[k]) {
    const GridD& t = (*in_.truth)[k];
    if (!metrics_[k]->set_truth(t.data, t.width, t.height)) return false;
    in_.truth_on_device[k] = true;
  }
  return true;
}

ErrorMetrics PipelineRunner::stage_errors(std::size_t k, const cl::Buffer& output,
                                          const StorageType& type,
                                          const std::vector<float>* host_output) {
  if (measures_on_device(k)) return metrics_[k]->compute(output, type, false);
  const GridD& t = (*in_.truth)[k];
  if (host_output) return compute_errors(t.data, *host_output, t.width, t.height, false);
  return compute_errors(t.data, read_back(env_.queue(), output, t.data.size(), type), t.width,
                        t.height, false);
}

void PipelineRunner::run_poisoned(const std::vector<PipelineStage>& chain,
                                  std::vector<StageSetup>& setups, const DeviceUpload& up,
                                  ChainOutcome& out, int& stage) {
  const Grid& input = *in_.grid;
  const int width = input.width, height = input.height;
  const std::size_t n = static_cast<std::size_t>(width) * height;
  auto& q = env_.queue();
  // Under the test hook every element a stage does not read is poisoned, the first stage reading a
  // poisoned copy of the input.
  std::optional<cl::Buffer> dirty_buffer;
  std::optional<cl::Image2D> dirty_image;
  if (opt_.poison_unread) {
    Grid dirty = input;
    poison_unread(dirty.data, chain, 0, width, height);
    std::vector<unsigned char> bytes = make_input(chain[0].variant, input_radius(chain, 0), dirty);
    dirty_buffer.emplace(env_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes.size(),
                         bytes.data());
    if (up.image)
      dirty_image.emplace(
          env_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
          cl::ImageFormat(CL_R, chain[0].variant.precision_info().in->image_channel_type),
          static_cast<std::size_t>(up.layout.width), static_cast<std::size_t>(up.layout.height), 0,
          bytes.data());
    set_input_arg(setups[0].steps[0].app, *dirty_buffer, dirty_image ? &*dirty_image : nullptr);
  }
  // NaN inside canary bands: an output left unwritten shows, and so does a write past it.
  for (auto& st : setups) st.buffers->poison(q, 0, *st.out_type);
  for (std::size_t i = 0; i < setups.size(); ++i) {
    StageSetup& st = setups[i];
    stage = static_cast<int>(st.stage);
    st.sample.enqueue(q, nullptr);
    if (opt_.poison_unread && i + 1 < setups.size()) {
      std::vector<float> dirty = read_back(q, st.output, n, *st.out_type);
      out.stages[st.stage].output = dirty;
      poison_unread(dirty, chain, st.stage + 1, width, height);
      std::vector<unsigned char> bytes(st.output_bytes);
      st.out_type->encode(dirty.data(), bytes.data(), n);
      q.enqueueWriteBuffer(st.output, CL_TRUE, 0, bytes.size(), bytes.data());
    }
  }
  q.finish();
  for (const StageSetup& st : setups)
    if (!st.buffers->guards_intact_on_device(q, 0, *st.out_type) && out.ok()) {
      out.status = "run_failed";
      out.failed_stage = static_cast<int>(st.stage);
      out.reason = (setups.size() == out.stages.size() ? "stage " + std::to_string(st.stage + 1) +
                                                             " (" + chain[st.stage].app->name + ")"
                                                       : std::string("the fused kernel")) +
                   " wrote outside its output buffer: a canary band around it was overwritten";
    }
}

void PipelineRunner::measure_outputs(const std::vector<PipelineStage>& chain,
                                     std::vector<StageSetup>& setups, const DeviceUpload& up,
                                     bool every_stage, ChainOutcome& out, int& stage) {
  run_poisoned(chain, setups, up, out, stage);
  const std::size_t n = static_cast<std::size_t>(in_.grid->width) * in_.grid->height;
  auto& q = env_.queue();
  for (const StageSetup& st : setups) {
    const std::size_t k = st.stage;
    stage = static_cast<int>(k);
    StageOutcome& so = out.stages[k];
    const bool measured = in_.truth && (every_stage || k + 1 == chain.size());
    if (so.output.empty() && (opt_.read_outputs || (measured && !measures_on_device(k))))
      so.output = read_back(q, st.output, n, *st.out_type);
    if (!measured) continue;
    so.errors = stage_errors(k, st.output, *st.out_type, so.output.empty() ? nullptr : &so.output);
    // An element that is not finite where the truth is was never written, or computed from values
    // never loaded: not a measurement.
    const std::int64_t extra = so.errors->nonfinite - in_.truth_nonfinite[k];
    if (in_.finite && extra > 0 && out.ok()) {
      out.status = "run_failed";
      out.failed_stage = stage;
      out.reason = "stage " + std::to_string(k + 1) + " (" + chain[k].app->name +
                   "): " + std::to_string(extra) +
                   " output elements are not finite where the truth is";
    }
  }
}

bool PipelineRunner::device_responds(std::string& why) {
  if (injected_loss_) {
    why = "clFinish failed: CL_INVALID_COMMAND_QUEUE (injected: KPERF_FAULT=lose-queue)";
    return false;
  }
  return kperf::device_responds(env_, why);
}

std::optional<std::pair<int, Verdict>> PipelineRunner::static_problem(
    const std::vector<PipelineStage>& chain) const {
  const Grid& input = *in_.grid;
  if (is_fused(chain)) {
    if (auto problem = fused_chain_problem(chain))
      return std::make_pair(problem->first, Verdict{"not_applicable", problem->second});
    return check_fused_launch(chain, env_.info());
  }
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    const int stage = static_cast<int>(k);
    if (auto verdict = check_launch(*s.app, s.variant, s.wg, env_.info()))
      return std::make_pair(stage, *verdict);
    if (auto misfit = output_misfit(s.variant.output, input.width, input.height))
      return std::make_pair(stage, Verdict{"not_applicable", *misfit});
    if (k > 0)
      if (auto problem = stage_link_problem(chain[k - 1].variant, s.variant))
        return std::make_pair(stage, Verdict{"not_applicable", *problem});
  }
  return std::nullopt;
}

ChainOutcome PipelineRunner::run(const std::vector<PipelineStage>& chain, Mode mode,
                                 const std::string& fault_stage) {
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
  if (auto problem = static_problem(chain))
    return fail(problem->first, problem->second.status, problem->second.reason);
  const Grid& input = *in_.grid;
  const int width = input.width, height = input.height;
  const bool fused = is_fused(chain);
  const std::string key = chain_key(opt_.pipeline, chain, in_.name, width, height);
  // One launch per stage, or the fused chain's one (writing the last stage's output).
  std::vector<StageSetup> setups(fused ? 1 : chain.size());
  int stage = -1;
  try {
    const DeviceUpload& up =
        device_upload(env_, in_.uploads, chain[0].variant, input_radius(chain, 0), input, true,
                      [this]() -> const std::string& {
                        if (!half_image_problem_)
                          half_image_problem_ = probe_half_images(env_, opt_.kernel_root);
                        return *half_image_problem_;
                      });
    const bool image_input = chain[0].variant.load_path().reads_image;
    if (image_input && !up.image) return fail(0, "not_applicable", up.image_problem);
    for (std::size_t i = 0; i < setups.size(); ++i) {
      StageSetup& st = setups[i];
      st.stage = fused ? chain.size() - 1 : i;
      stage = static_cast<int>(st.stage);
      const PipelineStage& s = chain[st.stage];
      st.out_type = s.variant.precision_info().out;
      st.buffers = &output_buffers(st.stage, width, height);
      st.output = st.buffers->view(*st.out_type, 0);
      st.output_bytes = static_cast<std::size_t>(width) * height * st.out_type->bytes;
      const auto [source, options] = program_of(chain, st.stage);
      if (auto problem = set_up_stage(
              env_, source, options, s, width, height, i == 0 && image_input ? &*up.image : nullptr,
              i == 0 ? up.buffer : setups[i - 1].output, st, out.stages[st.stage].build_log))
        return fail(fused ? -1 : stage, problem->first,
                    (fused ? "the fused kernel: " : "") + problem->second);
    }
    stage = -1;
    // KPERF_FAULT's crash, lose-queue and cl-error at this chain's launch, as at a configuration's.
    if (injected_launch_fault(key, fault_stage)) {
      injected_loss_ = true;
      throw cl::Error(CL_INVALID_COMMAND_QUEUE, "clFinish");
    }
    if (mode != Mode::kFinalError)
      time_chain(env_.queue(), opt_, setups, flush_ ? &*flush_ : nullptr, flush_bytes_, out);
    if (mode != Mode::kTimeOnly)
      measure_outputs(chain, setups, up, mode == Mode::kTimed, out, stage);
  } catch (const cl::Error& e) {
    // As the runner's configurations (faults.md): a fault where the device no longer answers,
    // else an ordinary failure of this chain.
    std::string why;
    if (!device_responds(why)) {
      lost_by_ = "a chain whose " + (stage >= 0 ? "stage " + std::to_string(stage + 1) : "set-up") +
                 " raised " + describe(e);
      return fail(stage, "device_fault",
                  describe(e) + "; then the device accepted no more commands (" + why + ")");
    }
    return fail(stage, "run_failed", describe(e));
  }
  return out;
}

void PipelineRunner::save_output(ChainOutcome& outcome, const std::string& dir,
                                 const std::string& key) const {
  // Every stage's output that was read back: an earlier stage's as <key>.stageK.npy (a fused
  // chain's earlier stages have none: they stay in local memory), the last one's as <key>.npy.
  const std::string base = key_to_filename(key);
  const std::string stem = base.substr(0, base.size() - 4);
  for (std::size_t k = 0; k < outcome.stages.size(); ++k) {
    StageOutcome& stage = outcome.stages[k];
    if (stage.output.empty()) continue;
    const bool last = k + 1 == outcome.stages.size();
    const fs::path file =
        fs::path(dir) / (last ? base : stem + ".stage" + std::to_string(k + 1) + ".npy");
    Grid g(in_.grid->width, in_.grid->height);
    g.data = stage.output;
    try {
      if (fault("save"))
        throw std::runtime_error(file.string() + ": injected fault (KPERF_FAULT=save)");
      write_npy(file.string(), g);
      stage.output_file = file.string();
    } catch (const std::exception& e) {
      outcome.status = "host_error";
      outcome.reason = std::string("--save-outputs: ") + e.what();
      outcome.output_lost = true;
      return;
    }
  }
  outcome.output_file = outcome.stages.back().output_file;
}

ChainTruth::ChainTruth(ClEnv* env, const std::vector<const AppDescriptor*>& apps,
                       const std::string& kernel_root, const AppParams& params,
                       const std::string& extra_options)
    : apps_(apps), params_(params) {
  for (const AppDescriptor* app : apps) {
    kernels_.emplace_back();
    if (!app->user()) continue;
    if (!env) throw std::logic_error("ChainTruth: the user app " + app->name + " needs a device");
    try {
      kernels_.back() = std::make_unique<AppTruth>(*env, *app, kernel_root, params, extra_options);
    } catch (const BuildError& e) {
      if (problem_.empty())
        problem_ = "stage " + std::to_string(kernels_.size()) + " (" + app->name +
                   "): its truth kernel does not build: " + e.what();
    }
  }
}

std::vector<GridD> ChainTruth::of(const Grid& input) {
  if (!problem_.empty()) throw std::logic_error("ChainTruth::of: " + problem_);
  std::vector<GridD> truth;
  truth.reserve(apps_.size());
  const GridD first = to_double(input.data, input.width, input.height);
  for (std::size_t k = 0; k < apps_.size(); ++k) {
    const GridD& from = k == 0 ? first : truth.back();
    truth.push_back(kernels_[k] ? kernels_[k]->run(from)
                                : reference_run(*apps_[k], from, nullptr, 1, params_));
  }
  return truth;
}

std::string ChainTruth::reference(std::size_t k) const {
  if (!apps_[k]->user()) return "cpu-fp64";
  return kernels_[k] ? kernels_[k]->kind() : "none";
}

GridEvaluator ChainTruth::evaluator(std::size_t k) {
  if (!kernels_[k]) return {};
  AppTruth* truth = kernels_[k].get();
  return [truth](const GridD& tiles) { return truth->run(tiles); };
}

std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params) {
  return ChainTruth(nullptr, apps, "", params).of(input);
}

std::vector<GridD> chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                               const AppParams& params,
                               const std::vector<GridEvaluator>& evaluators) {
  std::vector<GridD> models;
  GridD current = to_double(input.data, input.width, input.height);
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const PipelineStage& s = chain[k];
    // The stage reads its input at its input type; the model holds the value the buffer holds.
    const StorageType& in = *s.variant.precision_info().in;
    for (double& x : current.data) x = in.round(static_cast<double>(static_cast<float>(x)));
    current = model_run(*s.app, s.variant, s.wg, current, nullptr, 1, params,
                        k < evaluators.size() ? evaluators[k] : GridEvaluator{});
    models.push_back(current);
  }
  return models;
}

GridD fused_chain_model(const std::vector<PipelineStage>& chain, const Grid& input,
                        const AppParams& params, const std::vector<GridEvaluator>& evaluators) {
  std::vector<const AppDescriptor*> apps;
  std::vector<Variant> variants;
  for (const PipelineStage& s : chain) {
    apps.push_back(s.app);
    variants.push_back(s.variant);
  }
  return fused_model_run(apps, variants, chain.back().wg,
                         to_double(input.data, input.width, input.height), params, evaluators);
}

}  // namespace kperf
