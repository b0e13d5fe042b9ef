// The canary of --select canary on the device (issue 70): the rungs of a ladder and the accurate
// kernel computed on the canary's sampled work-groups alone (schemes/groups_sampled.cl), each
// sampled window's error sums reduced on the device (kernels/canary.cl), one small readback, and
// estimate_from_tiles on the host: the same tiles, windows and estimator as the host canary
// (InputCanary), at the cost of a few launches of a few hundred work-groups instead of
// milliseconds of CPU models.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "device_upload.hpp"
#include "input_canary.hpp"

namespace kperf {

// One device canary of a ladder on one input.
struct DeviceCanaryRun {
  std::vector<CanaryEstimate> estimates;  // one per rung, as InputCanary::estimate gives it
  // The canary's launches by their profiling events: from the first one's start to the last one's
  // end (the gaps between them included), and the sum of their own durations.
  double device_ns = 0, busy_ns = 0;
  int launches = 0;
};

class DeviceCanary {
 public:
  // Why this device cannot run device canaries (nothing when it can).
  static std::optional<std::string> unsupported(const ClEnv& env);
  // Why a rung cannot be estimated on the device (nothing when it can): canary_problem()'s
  // reasons, and launches whose groups are not the canary's blocks alone.
  static std::optional<std::string> problem(const CanaryStage& rung);

  // The global offset of a launch of the groups of `lattice` drawn with `seed`, as
  // schemes/groups_sampled.cl reads it: groups_x, groups_y, canary_group_key(seed), each below
  // 2^16. Throws std::invalid_argument for a lattice of 2^16 groups or more along an axis.
  static std::array<std::size_t, 3> launch_offset(const CanaryLattice& lattice, std::uint64_t seed);

  DeviceCanary(ClEnv& env, std::string kernel_root, CanarySettings settings, AppParams params = {},
               std::string extra_options = {});

  // Every rung's estimate on `input` (the rungs of one app's ladder) from the sample `seed` draws,
  // as InputCanary(input, settings, seed, params).estimate({rung}) gives it, to within float
  // rounding: the truth is the float accurate kernel's. All rungs' launches go back to back, one
  // blocking readback at the end. `uploads` holds the input as the variants read it (device_upload;
  // missing layouts are made). Throws std::invalid_argument for a rung problem() names, BuildError,
  // cl::Error.
  DeviceCanaryRun estimate(const Grid& input, DeviceUploads& uploads, std::uint64_t seed,
                           const std::vector<CanaryStage>& rungs);
  DeviceCanaryRun estimate(const Grid& input, std::uint64_t seed,
                           const std::vector<CanaryStage>& rungs);

 private:
  struct Plan;
  ClEnv& env_;
  std::string kernel_root_;
  CanarySettings settings_;
  AppParams params_;
  std::string extra_options_;
  std::map<std::string, std::string> sources_;                         // by file
  std::map<std::string, cl::Kernel> kernels_;                          // by program and kernel name
  std::map<std::string, std::pair<cl::Buffer, std::size_t>> buffers_;  // grown on demand
  std::optional<std::string> half_image_problem_;

  // The kernel `name` of `file`'s text after `prefix` (the sampled groups' file for an app).
  cl::Kernel& kernel(const std::string& file, const std::string& options, const std::string& name,
                     const std::string& prefix = "");
  cl::Buffer& buffer(const std::string& name, std::size_t bytes);
  Plan plan(int width, int height, std::uint64_t seed, const std::vector<CanaryStage>& rungs);
  // One launch of `stage` on the sampled groups of `sample` (and under an output scheme the
  // groups before them), writing `out`.
  void launch_app(const Grid& input, DeviceUploads& uploads, std::uint64_t seed,
                  const CanaryStage& stage, const CanarySample& sample, const cl::Buffer& out,
                  std::vector<cl::Event>& events);
  void enqueue_apps(const Grid& input, DeviceUploads& uploads, std::uint64_t seed, Plan& p,
                    std::vector<cl::Event>& events);
  void enqueue_reduction(int width, Plan& p, std::vector<cl::Event>& events);
};

}  // namespace kperf
