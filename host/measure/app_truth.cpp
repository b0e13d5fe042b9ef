// Runs an app's own accurate kernel in double precision as its reference (app_truth.hpp).
#include "app_truth.hpp"

#include <filesystem>
#include <vector>

#include "io.hpp"
#include "schemes.hpp"

namespace fs = std::filesystem;

namespace kperf {

namespace {

constexpr int kTruthWg = 8;  // 8x8 work-items: within every device's limit

}  // namespace

bool has_fp64(const cl::Device& device) {
  return device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_fp64") != std::string::npos;
}

std::string truth_build_options(const AppDescriptor& app, const std::string& kernel_root,
                                const AppParams& params, const std::string& extra_options,
                                bool fp64) {
  AxesSpec axes;
  axes.schemes = "accurate";
  axes.loads = "global";
  const Variant v = parse_variants(axes).front();
  return kernel_build_options(app, v, {kTruthWg, kTruthWg}, kernel_root, params, extra_options,
                              fp64);
}

AppTruth::AppTruth(ClEnv& env, const AppDescriptor& app, const std::string& kernel_root,
                   const AppParams& params, const std::string& extra_options)
    : env_(env), fp64_(has_fp64(env.device())) {
  const std::string source =
      read_file((fs::path(kernel_root) / "kernels" / app.kernel_file).string());
  if (fp64_) {
    try {
      program_ =
          env_.build(source, truth_build_options(app, kernel_root, params, extra_options, true));
      return;
    } catch (const BuildError& e) {
      const std::string& log = e.log();
      const auto error = log.find("error");
      fp64_problem_ =
          "it does not compile with float as double: " +
          (error == std::string::npos ? std::string(e.what())
                                      : log.substr(error, log.find('\n', error) - error));
      fp64_ = false;
    }
  }
  program_ =
      env_.build(source, truth_build_options(app, kernel_root, params, extra_options, false));
}

GridD AppTruth::run(const GridD& input) {
  const std::size_t n = input.data.size();
  const std::size_t element = fp64_ ? sizeof(double) : sizeof(float);
  std::vector<float> as_float;
  const void* host_in = input.data.data();
  if (!fp64_) {
    as_float.assign(input.data.begin(), input.data.end());
    host_in = as_float.data();
  }
  cl::Buffer in(env_.context(), CL_MEM_READ_ONLY, std::max<std::size_t>(n, 1) * element);
  cl::Buffer out(env_.context(), CL_MEM_WRITE_ONLY, std::max<std::size_t>(n, 1) * element);
  env_.queue().enqueueWriteBuffer(in, CL_TRUE, 0, n * element, host_in);
  cl::Kernel kernel(program_, "kperf_app");
  kernel.setArg(0, in);
  kernel.setArg(1, out);
  kernel.setArg(2, input.width);
  kernel.setArg(3, input.height);
  auto round_up = [](int v) {
    return static_cast<std::size_t>((v + kTruthWg - 1) / kTruthWg * kTruthWg);
  };
  env_.queue().enqueueNDRangeKernel(kernel, cl::NullRange,
                                    cl::NDRange(round_up(input.width), round_up(input.height)),
                                    cl::NDRange(kTruthWg, kTruthWg));
  GridD result(input.width, input.height);
  if (fp64_) {
    env_.queue().enqueueReadBuffer(out, CL_TRUE, 0, n * element, result.data.data());
  } else {
    std::vector<float> values(n);
    env_.queue().enqueueReadBuffer(out, CL_TRUE, 0, n * element, values.data());
    std::copy(values.begin(), values.end(), result.data.begin());
  }
  return result;
}

}  // namespace kperf
