// The device canary of kperf tune --select canary (select_device.hpp): where it runs, the rungs
// it takes, and one timed call per held-out input.
#include "select_device.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace kperf {

std::optional<std::string> host_canary_reason(const ClEnv& env, const std::string& on) {
  if (on == "host") return "--canary-on host";
  if (const auto why = DeviceCanary::unsupported(env))
    return "--canary-on " + on + ": the device cannot run the device canary: " + *why;
  const bool gpu = env.info().is_gpu() && !env.info().is_cpu();
  if (on == "auto" && !gpu)
    return "--canary-on auto: the device is not a GPU, so the device canary would run on the "
           "host's cores too (--canary-on device runs it there)";
  return std::nullopt;
}

SelectDeviceCanary::SelectDeviceCanary(ClEnv& env, const std::string& kernel_root,
                                       const CanarySettings& settings,
                                       const std::string& extra_options, std::size_t flush_bytes,
                                       const std::map<std::string, LadderRung>& rungs)
    : env_(env), canary_(env, kernel_root, settings, {}, extra_options), flush_bytes_(flush_bytes) {
  for (const auto& [label, r] : rungs) {
    if (r.exact) continue;
    if (r.stages.size() != 1)
      host_rungs_[label] = "a chain: the device canary takes one app's rungs";
    else if (const auto why = DeviceCanary::problem(r.stages.front()))
      host_rungs_[label] = *why;
    else
      device_rungs_.insert(label);
  }
  if (const char* text = std::getenv("KPERF_TEST_DEVICE_CANARY_SCALE"); text && *text) {
    char* end = nullptr;
    scale_ = std::strtod(text, &end);
    if (*end || !std::isfinite(scale_) || scale_ <= 0)
      throw std::invalid_argument(std::string("KPERF_TEST_DEVICE_CANARY_SCALE=") + text +
                                  ": expected a positive number");
  }
}

DeviceEstimates SelectDeviceCanary::estimate(const CanaryInput& in,
                                             const std::map<std::string, LadderRung>& rungs,
                                             const RungMeasures& here) {
  std::vector<std::string> labels;
  std::vector<CanaryStage> stages;
  for (const auto& [label, r] : rungs) {
    const auto m = here.find(label);
    if (!device_rungs_.count(label) || r.faulted || (m != here.end() && m->second.barred)) continue;
    labels.push_back(label);
    stages.push_back(r.stages.front());
  }
  DeviceEstimates out;
  if (stages.empty()) return out;
  const std::uint64_t seed = canary_seed(in.name);  // the host canary's tiles
  DeviceUploads uploads;
  // A deployment's canary finds its programs built and the input on the device (the kernel it
  // chooses reads the same upload): the first call makes them and is not counted.
  canary_.estimate(*in.grid, uploads, seed, stages);
  cl::CommandQueue& q = env_.queue();
  if (flush_bytes_) {
    // As before every timed sample of a cold tune: the canary does not find the first call's
    // reads in the cache.
    if (!flush_) flush_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, flush_bytes_);
    q.enqueueFillBuffer(*flush_, static_cast<cl_uint>(canary_seed(in.name)), 0, flush_bytes_);
  }
  q.finish();
  const auto start = std::chrono::steady_clock::now();
  const DeviceCanaryRun run = canary_.estimate(*in.grid, uploads, seed, stages);
  out.wall_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  out.device_ns = run.device_ns;
  out.busy_ns = run.busy_ns;
  out.launches = run.launches;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    CanaryEstimate e = run.estimates.at(i);
    e.estimate *= scale_;
    out.by_label[labels[i]] = e;
  }
  return out;
}

}  // namespace kperf
