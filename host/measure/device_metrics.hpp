// Error metrics computed where the output already is: on the OpenCL device (kernels/metrics.cl),
// against a double-precision truth uploaded once per workload, so a GPU run never downloads a
// full output grid to measure it. Same definitions as compute_errors; sums differ from the
// host's in rounding only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "device_residency.hpp"
#include "metrics.hpp"
#include "storage_types.hpp"

namespace kperf {

class DeviceMetrics {
 public:
  // Why `device` cannot compute the metrics (no double precision), or nullopt.
  static std::optional<std::string> unsupported(const cl::Device& device);

  DeviceMetrics(ClEnv& env, const std::string& kernel_root);
  // Uploads the accurate output of a width x height workload; false when it does not fit in
  // one allocation (the caller measures on the host instead).
  bool set_truth(const std::vector<double>& truth, int width, int height);
  // Measures against a truth already on the device (DeviceResidency); false for none.
  bool use_truth(std::shared_ptr<const DeviceTruth> truth);
  // The metrics of `output` (elements stored as `type`) against the truth.
  ErrorMetrics compute(const cl::Buffer& output, const StorageType& type, bool with_ssim);

 private:
  ClEnv& env_;
  cl::Program program_[kStorageTypes];  // per output storage type (storage_index)
  // Built once and reused for every configuration, per storage type
  cl::Kernel range_[kStorageTypes], sums_[kStorageTypes], ssim_[kStorageTypes];
  cl::Buffer window_, partial_, counts_;
  std::shared_ptr<const DeviceTruth> truth_;
};

}  // namespace kperf
