// The device state the measuring core keeps between chains (core.hpp's Core::Impl): the error
// metrics' kernels per stage, the second input's buffers, pinned memory that outputs are read
// into, the kernel sources and fused programs made so far. Not part of kperf's interface.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core.hpp"

namespace kperf {

struct Core::Impl {
  bool metrics_on_device = false;
  std::string metrics_reason;                           // why errors are computed on the host
  std::vector<std::unique_ptr<DeviceMetrics>> metrics;  // per stage position
  std::array<cl::Buffer, kStorageTypes> power;          // the second input per storage type
  std::array<bool, kStorageTypes> power_bound{};        // uploaded for the bound input
  std::optional<std::string> half_image_problem;
  std::map<std::string, std::string> sources;                        // by kernel file
  std::map<std::string, std::pair<std::string, std::string>> fused;  // by the chain's label
  // Pinned (CL_MEM_ALLOC_HOST_PTR, mapped once) memory that outputs are read into: a pageable
  // download of a fresh vector per configuration cost 0.5 s at 8192^2 on the H100.
  cl::Buffer stage;
  unsigned char* stage_ptr = nullptr;
  std::size_t stage_bytes = 0;
  unsigned char* staging(const cl::Context& context, cl::CommandQueue& queue, std::size_t bytes);
  void unmap_staging(cl::CommandQueue& queue);
};

}  // namespace kperf
