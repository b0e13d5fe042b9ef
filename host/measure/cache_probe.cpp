// The last-level cache by timing back-to-back copies of growing footprints (cache_probe.hpp).
#include "cache_probe.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

#include "compile_workers.hpp"
#include "io.hpp"
#include "sha256.hpp"
#include "stats.hpp"

namespace fs = std::filesystem;

namespace kperf {

std::optional<std::uint64_t> cache_bytes_of(const std::vector<CacheProbePoint>& points) {
  if (points.size() < 3) return std::nullopt;
  const auto peak = std::max_element(points.begin(), points.end(),
                                     [](const auto& a, const auto& b) { return a.gbps < b.gbps; });
  const double last = points.back().gbps;
  if (!(peak->gbps >= kMinCacheGain * last) || last <= 0) return std::nullopt;
  const double mid = 0.5 * (peak->gbps + last);
  for (auto it = peak + 1; it != points.end(); ++it) {
    if (it->gbps >= mid) continue;
    // The crossing of the midpoint, interpolated on a log scale of bytes between the two points.
    const auto& above = *(it - 1);
    const double t = (above.gbps - mid) / (above.gbps - it->gbps);
    const double bytes = std::exp(std::log(static_cast<double>(above.bytes)) +
                                  t * (std::log(static_cast<double>(it->bytes)) -
                                       std::log(static_cast<double>(above.bytes))));
    return static_cast<std::uint64_t>(bytes);
  }
  return std::nullopt;
}

std::optional<int> memory_bound_side(std::uint64_t cache_bytes, std::uint64_t memory_bytes,
                                     int default_side) {
  auto input_bytes = [](int side) { return std::uint64_t{4} * side * side; };
  if (2 * input_bytes(default_side) > cache_bytes) return std::nullopt;
  std::optional<int> fits;
  for (int side : {2048, 4096, 8192, 16384}) {
    if (2 * input_bytes(side) > memory_bytes / 4) break;
    fits = side;
    if (input_bytes(side) > cache_bytes) break;
  }
  return fits;
}

nlohmann::ordered_json CacheProbe::to_json() const {
  nlohmann::ordered_json pts = nlohmann::ordered_json::array();
  for (const auto& p : points) pts.push_back({{"bytes", p.bytes}, {"gbps", p.gbps}});
  nlohmann::ordered_json j;
  j["cache_bytes"] = cache_bytes ? nlohmann::ordered_json(*cache_bytes) : nullptr;
  if (!problem.empty()) j["problem"] = problem;
  j["method"] =
      "buffers of 1 MiB up in steps of sqrt(2), each read whole, again and again from a shifted "
      "start, in one launch of kernels/cache_probe.cl (at least 1 GiB read; one warm-up and the "
      "median of 3 timed launches, profiling events): bytes read over time. cache_bytes: where "
      "that bandwidth falls below the midpoint between its peak and its value at the largest "
      "buffer (log-interpolated), when the peak is at least 1.3x that value";
  j["points"] = pts;
  return j;
}

CacheProbe probe_last_level_cache(ClEnv& env, const std::string& kernel_root,
                                  std::uint64_t max_bytes, std::uint64_t read_bytes) {
  CacheProbe probe;
  const DeviceInfo& dev = env.info();
  max_bytes = std::min<std::uint64_t>(
      {max_bytes, dev.global_mem_size / 4, static_cast<std::uint64_t>(dev.max_mem_alloc_size)});
  constexpr std::uint64_t kMin = std::uint64_t{1} << 20;
  if (max_bytes < 4 * kMin) {
    probe.problem = "the device's memory is too small to probe";
    return probe;
  }
  try {
    const std::string source =
        read_file((fs::path(kernel_root) / "kernels" / "cache_probe.cl").string());
    cl::Program program = env.build(source, "-cl-std=CL1.2");
    const std::size_t bytes = static_cast<std::size_t>(max_bytes) & ~std::size_t{15};
    const std::size_t local = std::min<std::size_t>(256, dev.max_work_group_size);
    // Enough work-items to fill every core many times over, and no more: each reads its share of
    // every pass.
    const std::size_t most_items =
        std::max<std::size_t>(local, std::size_t{2048} * std::max(1u, dev.compute_units)) / local *
        local;
    cl::Buffer in(env.context(), CL_MEM_READ_ONLY, bytes);
    cl::Buffer out(env.context(), CL_MEM_WRITE_ONLY, most_items * sizeof(float));
    // Values like noise rather than a constant, written in blocks so that the host never holds
    // the whole buffer.
    std::vector<float> block(std::min<std::size_t>(bytes, std::size_t{4} << 20) / sizeof(float));
    std::mt19937 rng(2611);
    std::uniform_real_distribution<float> uniform(0.0f, 255.0f);
    for (float& v : block) v = uniform(rng);
    cl::CommandQueue& q = env.queue();
    for (std::size_t at = 0; at < bytes; at += block.size() * sizeof(float))
      q.enqueueWriteBuffer(in, CL_TRUE, at, std::min(bytes - at, block.size() * sizeof(float)),
                           block.data());
    cl::Kernel read(program, "read_passes");
    read.setArg(0, in);
    read.setArg(1, out);
    for (int step = 0;; ++step) {
      const double footprint = static_cast<double>(kMin) * std::pow(2.0, 0.5 * step);
      if (footprint > static_cast<double>(max_bytes) * (1 + 1e-9)) break;
      const std::size_t n4 = static_cast<std::size_t>(footprint) / 16;
      const int passes =
          static_cast<int>(std::max<std::uint64_t>(1, (read_bytes + n4 * 16 - 1) / (n4 * 16)));
      const std::size_t items = std::min(most_items, (n4 + local - 1) / local * local);
      read.setArg(2, static_cast<cl_int>(n4));
      read.setArg(3, static_cast<cl_int>(passes));
      read.setArg(4, static_cast<cl_int>(std::min<std::size_t>(4099, n4 - 1)));
      q.enqueueNDRangeKernel(read, cl::NullRange, cl::NDRange(items), cl::NDRange(local));
      std::vector<cl::Event> events(3);
      for (auto& ev : events)
        q.enqueueNDRangeKernel(read, cl::NullRange, cl::NDRange(items), cl::NDRange(local), nullptr,
                               &ev);
      q.finish();
      std::vector<std::uint64_t> samples;
      for (auto& ev : events)
        samples.push_back(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                          ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      const double median = summarize(samples).median;
      const double read_total = static_cast<double>(n4) * 16.0 * passes;
      probe.points.push_back({n4 * 16, median > 0 ? read_total / median : 0.0});
    }
  } catch (const cl::Error& e) {
    probe.problem = describe(e);
  } catch (const std::exception& e) {
    probe.problem = e.what();
  }
  if (probe.problem.empty()) {
    probe.cache_bytes = cache_bytes_of(probe.points);
    if (!probe.cache_bytes)
      probe.problem = "no cache effect: the peak bandwidth is less than 1.3x the largest size's";
  }
  return probe;
}

namespace {

CacheProbe probe_from_json(const nlohmann::json& j) {
  CacheProbe probe;
  for (const auto& p : j.at("points"))
    probe.points.push_back({p.at("bytes").get<std::uint64_t>(), p.at("gbps").get<double>()});
  if (j.contains("cache_bytes") && !j.at("cache_bytes").is_null())
    probe.cache_bytes = j.at("cache_bytes").get<std::uint64_t>();
  probe.problem = j.value("problem", std::string());
  return probe;
}

}  // namespace

const CacheProbe& command_cache_probe(ClEnv& env, const std::string& kernel_root) {
  static std::mutex mutex;
  static std::map<std::string, CacheProbe> probes;  // by device name
  std::lock_guard<std::mutex> lock(mutex);
  const DeviceInfo& dev = env.info();
  auto it = probes.find(dev.name);
  if (it != probes.end()) return it->second;
  CacheProbe probe;
  if (!dev.is_gpu()) {
    probe.problem = "not probed: a CPU device's caches are the host's";
    return probes.emplace(dev.name, probe).first->second;
  }
  // One file per device, so that the processes of one command agree on one measurement.
  std::string file;
  try {
    file = scratch_dir() + "/cache-probe-" + sha256_hex(dev.name).substr(0, 16) + ".json";
  } catch (const std::exception&) {
    // no scratch directory: this process probes for itself
  }
  std::error_code ec;
  if (!file.empty() && fs::is_regular_file(file, ec)) {
    try {
      probe = probe_from_json(nlohmann::json::parse(read_file(file)));
      return probes.emplace(dev.name, probe).first->second;
    } catch (const std::exception&) {
      probe = CacheProbe();  // half a file from a process that died writing it: probe again
    }
  }
  probe = probe_last_level_cache(env, kernel_root);
  if (!file.empty() && probe.cache_bytes) {  // a failed probe is tried again, not handed on
    try {
      write_file_atomic(file, probe.to_json().dump());
    } catch (const std::exception&) {
      // the next process probes again
    }
  }
  return probes.emplace(dev.name, probe).first->second;
}

}  // namespace kperf
