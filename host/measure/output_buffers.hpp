// Device output buffers of one grid size inside canary guard bands: each output is a parent
// buffer (guard, interior, guard) with a view of its interior per stored element size. They are
// poisoned (NaN interior, canary guards) before a configuration runs and their guards checked
// after, so a kernel that writes outside its output, or leaves an output unwritten, shows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "storage_types.hpp"

namespace kperf {

constexpr float kCanary = -3.1415926e30f;  // guard-band value no kernel writes

// Guard-band bytes on a device: 16 KiB, or its base-address alignment when larger; none on
// Oclgrind, which checks every access against the buffer's own bounds.
std::size_t guard_bytes_for(const DeviceInfo& dev);
// Why `buffers` grids of width x height (floats inside guard bands) do not fit the device, per
// buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) or in all (CL_DEVICE_GLOBAL_MEM_SIZE); nothing when they
// do. The command line refuses a grid that no single buffer holds before any work; the runner
// makes invalid_config rows of a workload whose buffers do not fit together.
std::optional<std::string> grid_memory_problem(const DeviceInfo& dev, int width, int height,
                                               std::size_t buffers);

// Canary guard bands of `guard` bytes around `interior`.
std::vector<unsigned char> guarded_bytes(std::size_t guard,
                                         const std::vector<unsigned char>& interior);
// Stored bytes of float values as `type` stores them (rounded to nearest even).
std::vector<unsigned char> to_storage_bytes(const std::vector<float>& values,
                                            const StorageType& type);

class OutputBuffers {
 public:
  bool sized(int width, int height) const { return width_ == width && height_ == height; }
  // Makes `parents` outputs of width x height (those already made are kept), with `guard`
  // bytes of canaries on each side. Call on an empty object or one of the same size and guard.
  // Throws cl::Error.
  void allocate(const cl::Context& context, int width, int height, std::size_t guard, int parents);

  std::size_t guard_bytes() const { return guard_; }
  const cl::Buffer& parent(int i) const { return parent_[i]; }
  // The interior of output i as elements of `type` (4-byte and 2-byte types each have a view).
  const cl::Buffer& view(const StorageType& type, int i) const { return view_[slot(type)][i]; }
  // Guards and interior at the stored size of `type`.
  std::size_t bytes(const StorageType& type) const { return init(type).size(); }
  // The poisoned contents: canaries around a NaN interior.
  const std::vector<unsigned char>& init(const StorageType& type) const;

  // Writes the poisoned contents into output i, by fills on the device where the offsets allow
  // (a full-grid host write per configuration cost more than the kernels).
  void poison(cl::CommandQueue& queue, int i, const StorageType& type) const;
  // Whether a downloaded copy of a whole output (bytes(type) of them) has its guards intact.
  bool guards_intact(const unsigned char* copy, const StorageType& type) const;
  // Whether output i's guards are intact, reading only the two bands.
  bool guards_intact_on_device(cl::CommandQueue& queue, int i, const StorageType& type) const;

 private:
  static int slot(const StorageType& type) { return type.bytes == 2 ? 1 : 0; }
  int width_ = 0, height_ = 0;
  std::size_t guard_ = 0;
  std::vector<unsigned char> init_[kStorageTypes];  // per storage_index
  cl::Buffer parent_[2], view_[2][2];               // view_[slot][i]: slot 0 4-byte, 1 2-byte
};

}  // namespace kperf
