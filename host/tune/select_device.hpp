// Where kperf tune --select canary's canaries run (--canary-on, issue 70): the device canary
// (measure/device_canary.hpp) for the rungs of an app's ladders that it takes, one call per
// held-out input for every budget, its cost measured as a deployment pays it; the host canary
// (InputCanary, the model the device canary is held to) for the others.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "cl_env.hpp"
#include "device_canary.hpp"
#include "select_walk.hpp"

namespace kperf {

// Why --canary-on `on` (auto, device or host) leaves every rung to the host canary on this
// device; nothing where the device canary runs: auto on a GPU, device wherever
// DeviceCanary::unsupported names nothing.
std::optional<std::string> host_canary_reason(const ClEnv& env, const std::string& on);

// One app's device canary over its held-out inputs.
class SelectDeviceCanary {
 public:
  // `rungs`: every rung of the app's ladders, by label; those DeviceCanary::problem names (and
  // chains) are left to the host canary, host_rungs() says why. `flush_bytes`: the cache flushed
  // before each timed call (cold timing), 0 for none.
  SelectDeviceCanary(ClEnv& env, const std::string& kernel_root, const CanarySettings& settings,
                     const std::string& extra_options, std::size_t flush_bytes,
                     const std::map<std::string, LadderRung>& rungs);
  const std::map<std::string, std::string>& host_rungs() const { return host_rungs_; }
  const std::set<std::string>& device_rungs() const { return device_rungs_; }
  // A known-bad factor on every device estimate, from KPERF_TEST_DEVICE_CANARY_SCALE (1 without):
  // how a test shows that its comparison with the host canary fails on estimates 1 % off.
  double test_scale() const { return scale_; }
  // One DeviceCanary::estimate call on `in` with every rung it takes (the faulted ones and those
  // barred on this input aside): made once untimed (programs built, the input uploaded in every
  // layout the rungs read, buffers grown), the cache flushed, then made again and timed. Nothing
  // is called when no rung is left. Throws what DeviceCanary::estimate throws.
  DeviceEstimates estimate(const CanaryInput& in, const std::map<std::string, LadderRung>& rungs,
                           const RungMeasures& here);

 private:
  ClEnv& env_;
  DeviceCanary canary_;
  std::size_t flush_bytes_;
  std::optional<cl::Buffer> flush_;
  std::map<std::string, std::string> host_rungs_;
  std::set<std::string> device_rungs_;
  double scale_ = 1;
};

}  // namespace kperf
