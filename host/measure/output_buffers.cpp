// Output buffers in canary guard bands: allocation, poisoning and the guard checks.
#include "output_buffers.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kperf {

std::size_t guard_bytes_for(const DeviceInfo& dev) {
  // Oclgrind checks every access against the bounds of the buffer it lies in, the parent's for a
  // sub-buffer: guard bands would hide a read up to 16 KiB past an output from it (a write there
  // trips the canaries; a read nothing). It checks writes too, so there the bands go.
  if (dev.platform_name.find("Oclgrind") != std::string::npos) return 0;
  return std::max<std::size_t>(16384, dev.mem_base_addr_align_bits / 8);
}

std::optional<std::string> grid_memory_problem(const DeviceInfo& dev, int width, int height,
                                               std::size_t buffers) {
  const std::size_t bytes =
      static_cast<std::size_t>(width) * height * sizeof(float) + 2 * guard_bytes_for(dev);
  if (bytes <= dev.max_mem_alloc_size && buffers * bytes <= dev.global_mem_size)
    return std::nullopt;
  return "a " + std::to_string(width) + "x" + std::to_string(height) + " grid needs " +
         std::to_string(buffers) + (buffers == 1 ? " buffer" : " buffers") + " of " +
         std::to_string(bytes >> 20) + " MiB; " + dev.name + " allows " +
         std::to_string(dev.max_mem_alloc_size >> 20) +
         " MiB per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and " +
         std::to_string(dev.global_mem_size >> 20) + " MiB in all (CL_DEVICE_GLOBAL_MEM_SIZE)";
}

std::vector<unsigned char> guarded_bytes(std::size_t guard,
                                         const std::vector<unsigned char>& interior) {
  std::vector<unsigned char> out(2 * guard + interior.size());
  for (std::size_t i = 0; i < guard; i += sizeof kCanary) {
    std::memcpy(&out[i], &kCanary, sizeof kCanary);
    std::memcpy(&out[guard + interior.size() + i], &kCanary, sizeof kCanary);
  }
  std::copy(interior.begin(), interior.end(), out.begin() + static_cast<long>(guard));
  return out;
}

std::vector<unsigned char> to_storage_bytes(const std::vector<float>& values,
                                            const StorageType& type) {
  std::vector<unsigned char> out(values.size() * type.bytes);
  type.encode(values.data(), out.data(), values.size());
  return out;
}

void OutputBuffers::allocate(const cl::Context& context, int width, int height, std::size_t guard,
                             int parents) {
  const std::size_t n = static_cast<std::size_t>(width) * height;
  if (!sized(width, height)) {
    width_ = width;
    height_ = height;
    guard_ = guard;
    const std::vector<float> nans(n, std::numeric_limits<float>::quiet_NaN());
    for (const StorageType& type : storage_types())
      init_[storage_index(type)] = guarded_bytes(guard, to_storage_bytes(nans, type));
  }
  for (int i = 0; i < parents; ++i) {
    if (parent_[i]()) continue;
    parent_[i] = cl::Buffer(context, CL_MEM_READ_WRITE, n * sizeof(float) + 2 * guard);
    for (int s = 0; s < 2; ++s) {
      const cl_buffer_region region{guard, n * (s ? 2 : 4)};
      view_[s][i] =
          parent_[i].createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    }
  }
}

const std::vector<unsigned char>& OutputBuffers::init(const StorageType& type) const {
  return init_[storage_index(type)];
}

void OutputBuffers::poison(cl::CommandQueue& queue, int i, const StorageType& type) const {
  const std::vector<unsigned char>& contents = init(type);
  const std::size_t interior = contents.size() - 2 * guard_;
  // Without bands (Oclgrind) one write of the whole buffer: Oclgrind 21.10's uninitialised-value
  // checker records a fill as one store per pattern, each of which resizes the buffer's record to
  // the pattern, so kernel stores after a fill were lost and a second kernel reading them (the
  // separate output fill) was told they were uninitialised.
  if (guard_ == 0 || (guard_ + interior) % sizeof kCanary != 0) {
    queue.enqueueWriteBuffer(parent_[i], CL_TRUE, 0, contents.size(), contents.data());
    return;
  }
  queue.enqueueFillBuffer(parent_[i], kCanary, 0, guard_);
  queue.enqueueFillBuffer(parent_[i], kCanary, guard_ + interior, guard_);
  if (type.bytes == 2) {
    std::uint16_t nan_half;
    std::memcpy(&nan_half, contents.data() + guard_, sizeof nan_half);
    queue.enqueueFillBuffer(parent_[i], nan_half, guard_, interior);
  } else {
    float nan_float;
    std::memcpy(&nan_float, contents.data() + guard_, sizeof nan_float);
    queue.enqueueFillBuffer(parent_[i], nan_float, guard_, interior);
  }
  queue.finish();
}

bool OutputBuffers::guards_intact(const unsigned char* copy, const StorageType& type) const {
  const std::vector<unsigned char>& contents = init(type);
  const std::size_t tail = contents.size() - guard_;
  return std::memcmp(copy, contents.data(), guard_) == 0 &&
         std::memcmp(copy + tail, contents.data() + tail, guard_) == 0;
}

bool OutputBuffers::guards_intact_on_device(cl::CommandQueue& queue, int i,
                                            const StorageType& type) const {
  if (guard_ == 0) return true;  // no bands (Oclgrind): nothing to read
  const std::vector<unsigned char>& contents = init(type);
  std::vector<unsigned char> band(guard_);
  for (std::size_t offset : {std::size_t{0}, contents.size() - guard_}) {
    queue.enqueueReadBuffer(parent_[i], CL_TRUE, offset, guard_, band.data());
    if (std::memcmp(band.data(), contents.data() + offset, guard_) != 0) return false;
  }
  return true;
}

}  // namespace kperf
