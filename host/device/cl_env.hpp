// OpenCL layer: device discovery and selection, context/profiling queue, cached program builds.
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/opencl.hpp>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kperf {

// Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_ERROR(<n>)".
std::string cl_error_name(cl_int code);

// "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE" from a CLHPP exception.
std::string describe(const cl::Error& error);

// Raised when OpenCL is unusable for the whole run (no platform, no matching device).
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised when a program fails to compile; carries the driver's build log.
class BuildError : public std::runtime_error {
 public:
  BuildError(const std::string& what, std::string log)
      : std::runtime_error(what), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// The papers' Table I fields of one device, plus its platform.
// The device's PCI domain and bus (cl_khr_pci_bus_info, else NVIDIA's attribute query), where the
// driver gives them.
std::optional<std::pair<unsigned, unsigned>> pci_domain_and_bus(const cl::Device& device);

struct DeviceInfo {
  int platform_index = 0;
  int device_index = 0;
  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, driver_version, device_version, opencl_c_version, type;
  unsigned compute_units = 0, max_clock_mhz = 0;
  std::uint64_t global_mem_size = 0, max_mem_alloc_size = 0, local_mem_size = 0;
  std::uint64_t global_mem_cache_size = 0;  // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE as reported
  std::string local_mem_type;  // "local" (dedicated) or "global" (emulated in global memory)
  bool unified_memory = false;
  std::size_t max_work_group_size = 0;
  std::vector<std::size_t> max_work_item_sizes;
  std::size_t profiling_timer_resolution_ns = 0;
  unsigned mem_base_addr_align_bits = 0;
  bool image_support = false;  // CL_DEVICE_IMAGE_SUPPORT (the image load path needs it)
  // "DDDD:BB" (PCI domain and bus) where the driver gives it, else "": which physical device
  // of a model measured a row (kperf merge keeps speedups within one).
  std::string pci_bus_id;
  // CL_DEVICE_UUID_KHR in hex where the driver has cl_khr_device_uuid, else "": the identity of
  // the physical device (two GPUs of a VM may report the same PCI domain and bus).
  std::string uuid;
  std::size_t image2d_max_width = 0, image2d_max_height = 0;
  // NVIDIA's compute capability as major * 10 + minor (cl_nv_device_attribute_query), else 0.
  int nv_compute_capability = 0;
  // Macros every program on this device is built with: what kernels may use that OpenCL C 1.2
  // cannot ask the device (KPERF_NV_SM: NVIDIA's compute capability, for inline PTX).
  std::string build_defines() const {
    return nv_compute_capability ? " -DKPERF_NV_SM=" + std::to_string(nv_compute_capability) : "";
  }
  bool is_gpu() const { return type.find("GPU") != std::string::npos; }
  // A CPU device (PoCL): the commands default to its short list of launch shapes.
  bool is_cpu() const { return type.find("CPU") != std::string::npos; }
};
nlohmann::ordered_json to_json(const DeviceInfo& info);

struct DeviceEntry {
  cl::Platform platform;
  cl::Device device;
  DeviceInfo info;
};

// Every device of every platform. Throws DeviceError when no platform exists.
std::vector<DeviceEntry> enumerate_devices();

// A parsed --device value: empty (default), "P:D" indices, or a name substring.
struct DeviceSelector {
  enum class Kind { kDefault, kIndex, kName } kind = Kind::kDefault;
  int platform = -1, device = -1;
  std::string name;
};
DeviceSelector parse_device_selector(const std::string& text);

// Index into `devices` chosen by `selector`: default picks the first GPU, else the first
// device. Throws DeviceError naming the valid choices when nothing matches.
std::size_t choose_device(const std::vector<DeviceInfo>& devices, const DeviceSelector& selector);

// A context and profiling queue on one device, and a cache of programs built on it.
class ClEnv {
 public:
  explicit ClEnv(DeviceEntry entry);

  const DeviceInfo& info() const { return entry_.info; }
  const cl::Device& device() const { return entry_.device; }
  cl::Context& context() { return context_; }
  cl::CommandQueue& queue() { return queue_; }

  // Builds `source` with `options` (and the device's build_defines) once per run; later calls
  // with the same pair return the cached program. Throws BuildError with the log on failure (also
  // cached: it fails again). Thread-safe: distinct programs may be built from several threads at
  // once.
  cl::Program build(const std::string& source, const std::string& options);
  // Builds every (source, options) pair on up to `threads` threads; failures are cached and
  // reported when build() is called for them.
  void prebuild(const std::vector<std::pair<std::string, std::string>>& jobs, unsigned threads);
  std::size_t builds_done() const { return builds_done_; }
  // Keeps program binaries in `dir`, keyed by `salt` (the contents of every kernel and scheme
  // file), the source, the options, the device, its driver and platform: a later build of the
  // same key loads the binary instead of compiling. Unreadable or rejected entries recompile.
  void enable_binary_cache(const std::string& dir, const std::string& salt);
  std::size_t binary_cache_hits() const { return cache_hits_; }
  const std::string& binary_cache_dir() const { return cache_dir_; }
  const std::string& binary_cache_salt() const { return cache_salt_; }
  // The cache file of this pair ("" when the cache is off); it exists once stored. Keyed, as
  // build() stores it, by the options with the device's build_defines.
  std::string binary_cache_path(const std::string& source, const std::string& options) const {
    return cache_dir_.empty() ? std::string()
                              : cache_file(source, options + entry_.info.build_defines());
  }
  // Tests: the device as another device would describe itself (a fake NVIDIA compute capability,
  // so that build_defines() is not empty on PoCL).
  void set_nv_compute_capability_for_tests(int capability) {
    entry_.info.nv_compute_capability = capability;
  }
  // Whether build() of this pair already ran in this process (built or failed).
  bool has_built(const std::string& source, const std::string& options);
  // Records this pair as a build that failed for `why` (a compile worker that never finished it),
  // unless it was built: build() then throws BuildError with that reason and no log.
  void fail_build(const std::string& source, const std::string& options, const std::string& why);
  std::size_t binary_cache_stores() const { return cache_stores_; }
  // Lets go of this pair's program (a compile worker, once the binary is stored): a worker that
  // lives for the whole command would otherwise hold every program it built.
  void forget(const std::string& source, const std::string& options);

 private:
  DeviceEntry entry_;
  cl::Context context_;
  cl::CommandQueue queue_;
  struct CachedBuild {
    std::optional<cl::Program> program;
    std::string error, log;
  };
  std::map<std::pair<std::string, std::string>, CachedBuild> programs_;
  std::mutex programs_mutex_;
  std::size_t builds_done_ = 0;
  std::string cache_dir_, cache_salt_;
  std::atomic<std::size_t> cache_hits_{0}, cache_stores_{0};
  std::string cache_file(const std::string& source, const std::string& options) const;
  std::optional<cl::Program> load_cached(const std::string& file, const std::string& options);
  void store_cached(const std::string& file, const cl::Program& program);
};

// Whether the device still runs commands after an OpenCL error: its queue finishes and a 4-byte
// buffer round-trips. Else false, and `why` says what failed (after a fault NVIDIA's driver
// refuses every call of the context).
bool device_responds(ClEnv& env, std::string& why);

// The binary cache's salt: the name and contents of every file under kernel_root's kernels/ and
// schemes/, so that an edited kernel or scheme file misses.
std::string kernel_sources_salt(const std::string& kernel_root);

}  // namespace kperf
