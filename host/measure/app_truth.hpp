// The truth of a user app, which has no C++ reference: its own accurate kernel compiled with
// every float in double (KPERF_FP64_TRUTH), or, on a device without fp64, its float accurate
// kernel. It also evaluates the app at the windows of the CPU tile model (model_run).
#pragma once

#include <string>

#include "apps.hpp"
#include "cl_env.hpp"

namespace kperf {

class AppTruth {
 public:
  // Builds the app's accurate kernel on the global load path, one output per work-item: in fp64
  // where the device has it and the kernel compiles so (a call like fmin(x, 2.0f) becomes
  // fmin(double, float), which has no overload), else in float. Throws BuildError (with the log)
  // where the kernel does not compile at all.
  AppTruth(ClEnv& env, const AppDescriptor& app, const std::string& kernel_root,
           const AppParams& params = {}, const std::string& extra_options = "");
  // "fp64-kernel" or "device-accurate": what each row's reference field says.
  const char* kind() const { return fp64_ ? "fp64-kernel" : "device-accurate"; }
  // Why the fp64 build was not used ("" where it was, or where the device has no fp64).
  const std::string& fp64_problem() const { return fp64_problem_; }
  // The app's accurate output of `input` (clamp-to-edge at the borders), in double.
  GridD run(const GridD& input);

 private:
  ClEnv& env_;
  bool fp64_;
  std::string fp64_problem_;
  cl::Program program_;
};

// Whether the device supports cl_khr_fp64.
bool has_fp64(const cl::Device& device);

// The options that build an app's accurate truth kernel (fp64: every float in double, numeric
// -D literals of the app's parameters without their f suffix).
std::string truth_build_options(const AppDescriptor& app, const std::string& kernel_root,
                                const AppParams& params, const std::string& extra_options,
                                bool fp64);

}  // namespace kperf
