// Error metrics on the OpenCL device (see device_metrics.hpp).
#include "device_metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "io.hpp"
#include "storage.hpp"

namespace kperf {

namespace {

constexpr int kGroup = 256;  // work-items per group (GROUP in metrics.cl)
// At most this many groups, fewer for grids of fewer than kGroups * kGroup elements (one element
// a work-item at least): the count depends on the grid alone, so the sums' order never depends on
// the device, and a small grid launches no idle groups.
constexpr int kGroups = 512;

}  // namespace

std::optional<std::string> DeviceMetrics::unsupported(const cl::Device& device) {
  const std::string ext = device.getInfo<CL_DEVICE_EXTENSIONS>();
  if (ext.find("cl_khr_fp64") == std::string::npos)
    return "the device has no double precision (cl_khr_fp64)";
  if (device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>() < static_cast<std::size_t>(kGroup))
    return "the device's work-groups hold fewer than 256 work-items";
  return std::nullopt;
}

DeviceMetrics::DeviceMetrics(ClEnv& env, const std::string& kernel_root) : env_(env) {
  const std::string source = read_file(kernel_root + "/kernels/metrics.cl");
  for (const StorageType& type : storage_types()) {
    const std::size_t t = storage_index(type);
    program_[t] = env_.build(source, "-cl-std=CL1.2 -I " + kernel_root + "/schemes" +
                                         " -DKPERF_PRECISION_FILE=" + type.cl_file +
                                         " -DGROUP=" + std::to_string(kGroup));
    range_[t] = cl::Kernel(program_[t], "error_range");
    sums_[t] = cl::Kernel(program_[t], "error_sums");
    ssim_[t] = cl::Kernel(program_[t], "ssim_sum");
  }
  const std::array<double, 11> g = ssim_window();
  window_ = cl::Buffer(env_.context(), CL_MEM_READ_ONLY, sizeof g);
  env_.queue().enqueueWriteBuffer(window_, CL_TRUE, 0, sizeof g, g.data());
  partial_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, sizeof(double) * 4 * kGroups);
  counts_ = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, sizeof(cl_long) * 5 * kGroups);
}

bool DeviceMetrics::set_truth(const std::vector<double>& truth, int width, int height) {
  return use_truth(upload_truth(env_, truth, width, height));
}

bool DeviceMetrics::use_truth(std::shared_ptr<const DeviceTruth> truth) {
  truth_ = std::move(truth);
  return truth_ != nullptr;
}

ErrorMetrics DeviceMetrics::compute(const cl::Buffer& output, const StorageType& type,
                                    bool with_ssim) {
  const std::size_t t = storage_index(type);
  auto& q = env_.queue();
  // In 64 bits: width x height is at most INT_MAX (upload_truth), but n + kGroup - 1 may not be.
  const std::int64_t elements = static_cast<std::int64_t>(truth_->width) * truth_->height;
  const cl_int n = static_cast<cl_int>(elements);
  const int groups =
      static_cast<int>(std::clamp<std::int64_t>((elements + kGroup - 1) / kGroup, 1, kGroups));
  const cl::NDRange global(static_cast<std::size_t>(kGroup) * groups), local(kGroup);
  std::vector<double> partial(4 * kGroups);
  std::vector<cl_long> counts(5 * kGroups);

  cl::Kernel& range = range_[t];
  range.setArg(0, truth_->buffer);
  range.setArg(1, output);
  range.setArg(2, n);
  range.setArg(3, partial_);
  q.enqueueNDRangeKernel(range, cl::NullRange, global, local);
  q.enqueueReadBuffer(partial_, CL_TRUE, 0, sizeof(double) * 3 * groups, partial.data());
  ErrorSums s;
  s.max_t = -std::numeric_limits<double>::infinity();
  s.min_t = std::numeric_limits<double>::infinity();
  double max_abs_t = 0;
  for (int g = 0; g < groups; ++g) {
    s.max_t = std::max(s.max_t, partial[3 * g]);
    s.min_t = std::min(s.min_t, partial[3 * g + 1]);
    max_abs_t = std::max(max_abs_t, partial[3 * g + 2]);
  }

  cl::Kernel& sums = sums_[t];
  sums.setArg(0, truth_->buffer);
  sums.setArg(1, output);
  sums.setArg(2, n);
  sums.setArg(3, 1e-6 * max_abs_t);
  sums.setArg(4, 1e-3 * std::max(1.0, truth_->max_abs));
  sums.setArg(5, partial_);
  sums.setArg(6, counts_);
  q.enqueueNDRangeKernel(sums, cl::NullRange, global, local);
  q.enqueueReadBuffer(partial_, CL_FALSE, 0, sizeof(double) * 4 * groups, partial.data());
  q.enqueueReadBuffer(counts_, CL_TRUE, 0, sizeof(cl_long) * 5 * groups, counts.data());
  for (int g = 0; g < groups; ++g) {  // in group order: reproducible
    s.rel += partial[4 * g];
    s.abs += partial[4 * g + 1];
    s.sq += partial[4 * g + 2];
    s.max_abs = std::max(s.max_abs, partial[4 * g + 3]);
    s.n += counts[5 * g];
    s.n_rel += counts[5 * g + 1];
    s.excluded += counts[5 * g + 2];
    s.nonfinite += counts[5 * g + 3];
    s.wrong += counts[5 * g + 4];
  }
  ErrorMetrics e = errors_from_sums(s, n);
  if (s.n == 0) return e;
  e.ssim = std::numeric_limits<double>::quiet_NaN();
  if (!with_ssim) return e;
  if (truth_->width < 11 || truth_->height < 11) {
    // Smaller than SSIM's window: one uniform window, as on the host.
    std::vector<float> values(static_cast<std::size_t>(n));
    std::vector<unsigned char> stored(values.size() * type.bytes);
    q.enqueueReadBuffer(output, CL_TRUE, 0, stored.size(), stored.data());
    type.decode(stored.data(), values.data(), values.size());
    std::vector<double> truth(values.size());
    q.enqueueReadBuffer(truth_->buffer, CL_TRUE, 0, truth.size() * 8, truth.data());
    e.ssim = mean_ssim(truth, values, truth_->width, truth_->height);
    return e;
  }
  cl::Kernel& ssim = ssim_[t];
  ssim.setArg(0, truth_->buffer);
  ssim.setArg(1, output);
  ssim.setArg(2, static_cast<cl_int>(truth_->width));
  ssim.setArg(3, static_cast<cl_int>(truth_->height));
  ssim.setArg(4, truth_->c1);
  ssim.setArg(5, truth_->c2);
  ssim.setArg(6, window_);
  ssim.setArg(7, partial_);
  q.enqueueNDRangeKernel(ssim, cl::NullRange, global, local);
  q.enqueueReadBuffer(partial_, CL_TRUE, 0, sizeof(double) * groups, partial.data());
  double total = 0;
  for (int g = 0; g < groups; ++g) total += partial[g];
  e.ssim = total / (static_cast<double>(truth_->width - 10) * (truth_->height - 10));
  return e;
}

}  // namespace kperf
