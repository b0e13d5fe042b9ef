// OpenCL layer: device discovery and selection, context/profiling queue, cached program builds.
#include "cl_env.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "io.hpp"
#include "program_sources.hpp"

namespace kperf {

std::string describe(const cl::Error& error) {
  return std::string(error.what()) + " failed: " + cl_error_name(error.err());
}

bool device_responds(ClEnv& env, std::string& why) {
  try {
    env.queue().finish();
    cl_int probe = 1;
    cl::Buffer buffer(env.context(), CL_MEM_READ_WRITE, sizeof probe);
    env.queue().enqueueWriteBuffer(buffer, CL_TRUE, 0, sizeof probe, &probe);
    env.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, sizeof probe, &probe);
    return true;
  } catch (const cl::Error& e) {
    why = describe(e);
    return false;
  }
}

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

std::string device_type_name(cl_device_type type) {
  std::vector<std::string> names;
  if (type & CL_DEVICE_TYPE_CPU) names.push_back("CPU");
  if (type & CL_DEVICE_TYPE_GPU) names.push_back("GPU");
  if (type & CL_DEVICE_TYPE_ACCELERATOR) names.push_back("ACCELERATOR");
  if (type & CL_DEVICE_TYPE_CUSTOM) names.push_back("CUSTOM");
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "|") + n;
  return joined.empty() ? "UNKNOWN" : joined;
}

DeviceInfo query_info(const cl::Platform& platform, const cl::Device& device, int p, int d) {
  DeviceInfo info;
  info.platform_index = p;
  info.device_index = d;
  info.platform_name = trim(platform.getInfo<CL_PLATFORM_NAME>());
  info.platform_vendor = trim(platform.getInfo<CL_PLATFORM_VENDOR>());
  info.platform_version = trim(platform.getInfo<CL_PLATFORM_VERSION>());
  info.name = trim(device.getInfo<CL_DEVICE_NAME>());
  info.vendor = trim(device.getInfo<CL_DEVICE_VENDOR>());
  info.driver_version = trim(device.getInfo<CL_DRIVER_VERSION>());
  info.device_version = trim(device.getInfo<CL_DEVICE_VERSION>());
  info.opencl_c_version = trim(device.getInfo<CL_DEVICE_OPENCL_C_VERSION>());
  info.type = device_type_name(device.getInfo<CL_DEVICE_TYPE>());
  info.compute_units = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.max_clock_mhz = device.getInfo<CL_DEVICE_MAX_CLOCK_FREQUENCY>();
  info.global_mem_size = device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.max_mem_alloc_size = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.local_mem_size = device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.global_mem_cache_size = device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  info.local_mem_type = device.getInfo<CL_DEVICE_LOCAL_MEM_TYPE>() == CL_LOCAL ? "local" : "global";
  info.unified_memory = device.getInfo<CL_DEVICE_HOST_UNIFIED_MEMORY>() != CL_FALSE;
  info.max_work_group_size = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.max_work_item_sizes = device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  info.profiling_timer_resolution_ns = device.getInfo<CL_DEVICE_PROFILING_TIMER_RESOLUTION>();
  info.mem_base_addr_align_bits = device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>();
  info.image_support = device.getInfo<CL_DEVICE_IMAGE_SUPPORT>() == CL_TRUE;
  if (info.image_support) {
    info.image2d_max_width = device.getInfo<CL_DEVICE_IMAGE2D_MAX_WIDTH>();
    info.image2d_max_height = device.getInfo<CL_DEVICE_IMAGE2D_MAX_HEIGHT>();
  }
  if (device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_device_uuid") != std::string::npos) {
    unsigned char uuid[16] = {};
    if (clGetDeviceInfo(device(), 0x106A, sizeof uuid, uuid, nullptr) == CL_SUCCESS) {
      char hex[33];
      for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
      info.uuid = hex;
    }
  }
  if (device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_nv_device_attribute_query") !=
      std::string::npos) {
    cl_uint major = 0, minor = 0;  // CL_DEVICE_COMPUTE_CAPABILITY_{MAJOR,MINOR}_NV
    if (clGetDeviceInfo(device(), 0x4000, sizeof major, &major, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device(), 0x4001, sizeof minor, &minor, nullptr) == CL_SUCCESS)
      info.nv_compute_capability = static_cast<int>(major * 10 + minor);
  }
  if (const auto pci = pci_domain_and_bus(device)) {
    char id[32];
    std::snprintf(id, sizeof id, "%04x:%02x", pci->first, pci->second);
    info.pci_bus_id = id;
  }
  return info;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::optional<std::pair<unsigned, unsigned>> pci_domain_and_bus(const cl::Device& device) {
  const std::string ext = device.getInfo<CL_DEVICE_EXTENSIONS>();
  if (ext.find("cl_khr_pci_bus_info") != std::string::npos) {
    cl_uint info[4] = {0, 0, 0, 0};  // cl_device_pci_bus_info_khr: domain, bus, device, function
    if (clGetDeviceInfo(device(), 0x410F, sizeof info, info, nullptr) == CL_SUCCESS)
      return std::make_pair(info[0], info[1]);
  }
  if (ext.find("cl_nv_device_attribute_query") != std::string::npos) {
    cl_uint bus = 0, domain = 0;
    if (clGetDeviceInfo(device(), 0x4008, sizeof bus, &bus, nullptr) != CL_SUCCESS)
      return std::nullopt;
    if (clGetDeviceInfo(device(), 0x400A, sizeof domain, &domain, nullptr) != CL_SUCCESS)
      domain = 0;  // older drivers: no domain query
    return std::make_pair(domain, bus);
  }
  return std::nullopt;
}

nlohmann::ordered_json to_json(const DeviceInfo& info) {
  nlohmann::ordered_json j;
  j["index"] = std::to_string(info.platform_index) + ":" + std::to_string(info.device_index);
  j["name"] = info.name;
  j["vendor"] = info.vendor;
  j["driver_version"] = info.driver_version;
  j["device_version"] = info.device_version;
  j["opencl_c_version"] = info.opencl_c_version;
  j["type"] = info.type;
  j["compute_units"] = info.compute_units;
  j["max_clock_mhz"] = info.max_clock_mhz;
  j["global_mem_size"] = info.global_mem_size;
  j["max_mem_alloc_size"] = info.max_mem_alloc_size;
  j["local_mem_size"] = info.local_mem_size;
  j["global_mem_cache_size"] = info.global_mem_cache_size;
  j["local_mem_type"] = info.local_mem_type;
  j["unified_memory"] = info.unified_memory;
  j["max_work_group_size"] = info.max_work_group_size;
  j["max_work_item_sizes"] = info.max_work_item_sizes;
  j["profiling_timer_resolution_ns"] = info.profiling_timer_resolution_ns;
  j["image_support"] = info.image_support;
  j["image2d_max_size"] = {info.image2d_max_width, info.image2d_max_height};
  if (!info.pci_bus_id.empty()) j["pci_bus_id"] = info.pci_bus_id;
  if (!info.uuid.empty()) j["uuid"] = info.uuid;
  if (info.nv_compute_capability)
    j["nv_compute_capability"] = std::to_string(info.nv_compute_capability / 10) + "." +
                                 std::to_string(info.nv_compute_capability % 10);
  j["platform"] = {{"name", info.platform_name},
                   {"vendor", info.platform_vendor},
                   {"version", info.platform_version}};
  return j;
}

std::vector<DeviceEntry> enumerate_devices() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    throw DeviceError("no OpenCL platform found (" + cl_error_name(e.err()) +
                      "); install an ICD such as pocl-opencl-icd");
  }
  if (platforms.empty())
    throw DeviceError("no OpenCL platform found; install an ICD such as pocl-opencl-icd");
  std::vector<DeviceEntry> entries;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    std::vector<cl::Device> devices;
    try {
      platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;  // A platform without devices is not an error for the others.
    }
    for (std::size_t d = 0; d < devices.size(); ++d)
      entries.push_back(
          {platforms[p], devices[d],
           query_info(platforms[p], devices[d], static_cast<int>(p), static_cast<int>(d))});
  }
  if (entries.empty()) throw DeviceError("no OpenCL device found on any platform");
  return entries;
}

DeviceSelector parse_device_selector(const std::string& text) {
  DeviceSelector sel;
  if (text.empty()) return sel;
  const auto colon = text.find(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < text.size() &&
      std::all_of(text.begin(), text.begin() + static_cast<long>(colon), ::isdigit) &&
      std::all_of(text.begin() + static_cast<long>(colon) + 1, text.end(), ::isdigit) &&
      text.size() < 12) {
    sel.kind = DeviceSelector::Kind::kIndex;
    sel.platform = std::stoi(text.substr(0, colon));
    sel.device = std::stoi(text.substr(colon + 1));
    return sel;
  }
  sel.kind = DeviceSelector::Kind::kName;
  sel.name = text;
  return sel;
}

std::size_t choose_device(const std::vector<DeviceInfo>& devices, const DeviceSelector& selector) {
  if (devices.empty()) throw DeviceError("no OpenCL device found on any platform");
  auto choices = [&] {
    std::string list;
    for (const auto& d : devices)
      list += (list.empty() ? "" : ", ") + std::to_string(d.platform_index) + ":" +
              std::to_string(d.device_index) + " (" + d.name + ")";
    return list;
  };
  switch (selector.kind) {
    case DeviceSelector::Kind::kDefault:
      for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].is_gpu()) return i;
      return 0;
    case DeviceSelector::Kind::kIndex:
      for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].platform_index == selector.platform &&
            devices[i].device_index == selector.device)
          return i;
      throw DeviceError("no device " + std::to_string(selector.platform) + ":" +
                        std::to_string(selector.device) + "; devices: " + choices());
    case DeviceSelector::Kind::kName: {
      const std::string needle = lower(selector.name);
      for (std::size_t i = 0; i < devices.size(); ++i)
        if (lower(devices[i].name).find(needle) != std::string::npos) return i;
      throw DeviceError("no device name contains '" + selector.name + "'; devices: " + choices());
    }
  }
  return 0;
}

ClEnv::ClEnv(DeviceEntry entry) : entry_(std::move(entry)) {
  program_sources_ledger();  // exported before this process starts any worker that builds
  context_ = cl::Context(entry_.device);
  try {
    queue_ = cl::CommandQueue(context_, entry_.device, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    throw DeviceError("device '" + entry_.info.name +
                      "' cannot create a profiling command queue (" + cl_error_name(e.err()) +
                      "); kperf times kernels with profiling events only");
  }
}

namespace {

// FNV-1a over the parts, with a separator so ("ab", "c") and ("a", "bc") differ.
std::uint64_t fnv1a(std::uint64_t hash, const std::string& text) {
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return (hash ^ 0xffu) * 0x100000001b3ULL;
}

}  // namespace

std::string kernel_sources_salt(const std::string& kernel_root) {
  std::vector<std::filesystem::path> files;
  for (const char* sub : {"kernels", "schemes"})
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::path(kernel_root) / sub))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string salt;
  for (const auto& f : files) salt += f.filename().string() + '\0' + read_file(f.string()) + '\0';
  return salt;
}

void ClEnv::enable_binary_cache(const std::string& dir, const std::string& salt) {
  cache_dir_ = dir;
  cache_salt_ = salt;
}

namespace {

// Build options without their include directories ("-I DIR"): the salt already holds the contents
// of every file those directories provide, so two checkouts (or build trees) of the same sources
// share cache entries.
std::string options_without_include_dirs(const std::string& options) {
  std::istringstream in(options);
  std::string word, out;
  while (in >> word) {
    if (word == "-I") {
      in >> word;
      continue;
    }
    if (word.rfind("-I", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

}  // namespace

std::string ClEnv::cache_file(const std::string& source, const std::string& options) const {
  const DeviceInfo& d = entry_.info;
  char name[48];
  const std::string key_options = options_without_include_dirs(options);
  std::uint64_t parts[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};  // two seeds: 128 bits
  for (auto& h : parts)
    for (const std::string* s : {&cache_salt_, &d.name, &d.driver_version, &d.device_version,
                                 &d.platform_version, &key_options, &source})
      h = fnv1a(h, *s);
  std::snprintf(name, sizeof name, "%016llx%016llx.bin", static_cast<unsigned long long>(parts[0]),
                static_cast<unsigned long long>(parts[1]));
  return cache_dir_ + "/" + name;
}

std::optional<cl::Program> ClEnv::load_cached(const std::string& file, const std::string& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<unsigned char> binary((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
  if (binary.empty()) return std::nullopt;
  try {
    cl::Program program(context_, {entry_.device}, cl::Program::Binaries{binary});
    program.build(std::vector<cl::Device>{entry_.device}, options.c_str());
    ++cache_hits_;
    return program;
  } catch (const cl::Error&) {
    return std::nullopt;  // stale or foreign: compile from source instead
  }
}

void ClEnv::store_cached(const std::string& file, const cl::Program& program) {
  try {
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.size() != 1 || binaries[0].empty()) return;
    // Written under a unique name and renamed: concurrent runs never read half a file.
    const std::string tmp =
        file + ".tmp." + std::to_string(::getpid()) + "." +
        std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(binaries[0].data()),
                static_cast<std::streamsize>(binaries[0].size()));
      if (!out) {
        std::remove(tmp.c_str());
        return;
      }
    }
    if (std::rename(tmp.c_str(), file.c_str()) == 0)
      ++cache_stores_;
    else
      std::remove(tmp.c_str());
  } catch (const cl::Error&) {
  }
}

bool ClEnv::has_built(const std::string& source, const std::string& options) {
  std::lock_guard<std::mutex> lock(programs_mutex_);
  return programs_.count(std::make_pair(source, options)) != 0;
}

void ClEnv::fail_build(const std::string& source, const std::string& options,
                       const std::string& why) {
  CachedBuild failed;
  failed.error = why;
  std::lock_guard<std::mutex> lock(programs_mutex_);
  programs_.emplace(std::make_pair(source, options), std::move(failed));
}

void ClEnv::forget(const std::string& source, const std::string& options) {
  std::lock_guard<std::mutex> lock(programs_mutex_);
  programs_.erase(std::make_pair(source, options));
}

namespace {

// Test hook (tests/fault_test.py): KPERF_FAULT=crash-build:TEXT raises SIGSEGV where the compiler
// would build a program whose build options contain TEXT, in this process or a compile worker, as
// a compiler that crashes on that program does.
void injected_compiler_crash(const std::string& options) {
  static const std::string text = [] {
    const char* spec = std::getenv("KPERF_FAULT");
    const std::string kind = "crash-build:";
    return spec && std::string(spec).rfind(kind, 0) == 0 ? std::string(spec + kind.size())
                                                         : std::string();
  }();
  if (text.empty() || options.find(text) == std::string::npos) return;
  std::signal(SIGSEGV, SIG_DFL);  // as the compiler's own crash: no handler between
  std::raise(SIGSEGV);
}

}  // namespace

cl::Program ClEnv::build(const std::string& source, const std::string& options) {
  auto key = std::make_pair(source, options);
  {
    std::lock_guard<std::mutex> lock(programs_mutex_);
    auto it = programs_.find(key);
    if (it != programs_.end()) {
      if (!it->second.program) throw BuildError(it->second.error, it->second.log);
      return *it->second.program;
    }
  }
  // Compile outside the lock so other threads can compile other programs meanwhile.
  CachedBuild cached;
  const std::string device_options = options + entry_.info.build_defines();
  const std::string file = binary_cache_path(source, options);
  if (!file.empty()) cached.program = load_cached(file, device_options);
  cl::Program program(context_, source);
  if (!cached.program) {
    try {
      injected_compiler_crash(device_options);
      program.build(std::vector<cl::Device>{entry_.device}, device_options.c_str());
      cached.program = program;
      if (!file.empty()) store_cached(file, program);
    } catch (const cl::Error& e) {
      cached.error = describe(e);
      try {
        cached.log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(entry_.device);
      } catch (const cl::Error&) {
        cached.log = "(no build log available)";
      }
    }
  }
  record_program_sources(source, device_options);  // built or not: the run tried these files
  std::lock_guard<std::mutex> lock(programs_mutex_);
  auto [it, inserted] = programs_.emplace(std::move(key), std::move(cached));
  if (inserted) ++builds_done_;
  if (!it->second.program) throw BuildError(it->second.error, it->second.log);
  return *it->second.program;
}

void ClEnv::prebuild(const std::vector<std::pair<std::string, std::string>>& jobs,
                     unsigned threads) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        build(jobs[i].first, jobs[i].second);
      } catch (const BuildError&) {
        // Cached; the configuration's own build() call turns it into a build_failed row.
      } catch (const cl::Error&) {
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace kperf
