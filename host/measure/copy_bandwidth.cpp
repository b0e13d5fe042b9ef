// The copy kernels' bandwidth per grid size (copy_bandwidth.hpp): checked as well as timed.
#include "copy_bandwidth.hpp"

#include <algorithm>
#include <cstring>

#include "stats.hpp"
#include "synthetic.hpp"

namespace kperf {

double CopyBandwidth::gbps_for(int width, int height) {
  for (const auto& c : copies_)
    if (c.width == width && c.height == height) return std::max(c.scalar_gbps, c.vec4_gbps);
  CopyResult result{width, height, 0, 0, "ok"};
  result.cold = core_.flush_bytes() > 0;
  try {
    const std::size_t n = static_cast<std::size_t>(width) * height;
    cl::Program program = env_.build(core_.kernel_source("copy.cl"), "-cl-std=CL1.2");
    cl::Buffer in(env_.context(), CL_MEM_READ_WRITE, n * sizeof(float));
    cl::Buffer out(env_.context(), CL_MEM_READ_WRITE, n * sizeof(float));
    // Values like an image's, not a constant: predictable data can inflate a copy's bandwidth
    // (clpeak's finding), and every byte the copies read is written first.
    const Grid pattern = make_synthetic_image("noise", width, height);
    env_.queue().enqueueWriteBuffer(in, CL_TRUE, 0, n * sizeof(float), pattern.data.data());
    // The copies are checked as well as timed: each output read back once equals the input.
    auto check_copy = [&](const char* name, std::size_t elements) {
      if (result.status != "ok" || elements == 0) return;
      std::vector<float> back(elements);
      env_.queue().enqueueReadBuffer(out, CL_TRUE, 0, elements * sizeof(float), back.data());
      if (std::memcmp(back.data(), pattern.data.data(), elements * sizeof(float)) != 0)
        result.status = std::string(name) + " wrote something other than its input";
    };
    // A power of two: n is at most INT_MAX (io.hpp), so the rounded-up launch stays within 2^31
    // work-items and copy.cl's int index cannot wrap.
    std::size_t local = 256;
    while (local > 1 && local > env_.info().max_work_group_size) local /= 2;
    auto measure = [&](const char* name, std::size_t items, double bytes) {
      if (items == 0) return 0.0;
      cl::Kernel k(program, name);
      k.setArg(0, in);
      k.setArg(1, out);
      k.setArg(2, static_cast<cl_int>(items));
      const cl::NDRange global((items + local - 1) / local * local);
      for (int i = 0; i < core_.options().warmup; ++i)
        env_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(local));
      std::vector<cl::Event> events(static_cast<std::size_t>(std::max(1, core_.options().reps)));
      for (auto& ev : events) {
        // --cold: timed as the kernels it is the roofline of are (time_samples), after a fill of
        // a buffer larger than the cache, so a cold kernel's bandwidth is not divided by a warm
        // copy's.
        if (core_.flush_bytes()) {
          env_.queue().enqueueFillBuffer(
              core_.flush_buffer(), static_cast<cl_uint>(++result.flushes), 0, core_.flush_bytes());
        }
        env_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(local), nullptr,
                                          &ev);
      }
      env_.queue().finish();
      std::vector<std::uint64_t> samples;
      for (auto& ev : events)
        samples.push_back(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                          ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      const double median = summarize(samples).median;
      return median > 0 ? bytes / median : 0.0;  // bytes per ns = GB/s
    };
    result.scalar_gbps = measure("copy_scalar", n, 2.0 * n * sizeof(float));
    check_copy("copy_scalar", n);
    result.vec4_gbps = measure("copy_vec4", n / 4, 2.0 * (n / 4) * 4 * sizeof(float));
    check_copy("copy_vec4", n / 4 * 4);
    const double halves = static_cast<double>(n / 8 * 8);
    result.half_gbps = measure("copy_half8", n / 8, 2.0 * halves * 2);
    result.half_convert_gbps = measure("copy_half8_convert", n / 8, 2.0 * halves * 2);
    result.half_to_float_gbps = measure("copy_half8_to_float", n / 8, halves * (2 + 4));
  } catch (const cl::Error& e) {
    result.status = describe(e);
  } catch (const BuildError& e) {
    result.status = std::string("copy kernel build failed: ") + e.what();
  }
  copies_.push_back(result);
  return std::max(result.scalar_gbps, result.vec4_gbps);
}

nlohmann::ordered_json CopyBandwidth::json() const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : copies_)
    list.push_back({{"width", c.width},
                    {"height", c.height},
                    {"scalar_gbps", c.scalar_gbps},
                    {"float4_gbps", c.vec4_gbps},
                    {"copy_gbps", std::max(c.scalar_gbps, c.vec4_gbps)},
                    {"half_gbps", c.half_gbps},
                    {"half_convert_gbps", c.half_convert_gbps},
                    {"half_to_float_gbps", c.half_to_float_gbps},
                    {"cold", c.cold},
                    {"flushes", c.flushes},
                    {"status", c.status}});
  return list;
}

double CopyBandwidth::largest_gbps() const {
  double best = 0;
  std::size_t largest = 0;
  for (const auto& c : copies_) {
    const std::size_t n = static_cast<std::size_t>(c.width) * c.height;
    if (n >= largest) largest = n, best = std::max(c.scalar_gbps, c.vec4_gbps);
  }
  return best;
}

}  // namespace kperf
