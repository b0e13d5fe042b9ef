// Whether a launch can run on a device (launch_checks.hpp), before and after its program is built.
#include "launch_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "kernel_axes.hpp"
#include "structural_axes.hpp"

namespace kperf {

std::optional<Verdict> check_launch(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                    const DeviceInfo& dev) {
  if (auto verdict = check_variant(v, app, wg)) return verdict;
  if (v.load_path().reads_image && !dev.image_support)
    return Verdict{Status::kNotApplicable, "the image load path needs image support and " +
                                               dev.name +
                                               " has none (CL_DEVICE_IMAGE_SUPPORT is false)"};
  if (auto verdict = check_work_group(wg, dev)) return verdict;
  const std::size_t tile_bytes = tile_local_bytes(app, v, wg);
  if (tile_bytes > dev.local_mem_size)
    return Verdict{Status::kInvalidConfig, "tile needs " + std::to_string(tile_bytes) +
                                               " bytes of local memory; device has " +
                                               std::to_string(dev.local_mem_size)};
  return std::nullopt;
}

std::optional<Verdict> check_work_group(WorkGroup wg, const DeviceInfo& dev) {
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  if (items > dev.max_work_group_size)
    return Verdict{Status::kInvalidConfig,
                   "work-group " + std::to_string(wg.x) + "x" + std::to_string(wg.y) + " = " +
                       std::to_string(items) +
                       " work-items exceeds CL_DEVICE_MAX_WORK_GROUP_SIZE " +
                       std::to_string(dev.max_work_group_size)};
  for (int d = 0; d < 2; ++d) {
    const std::size_t side = d == 0 ? wg.x : wg.y;
    if (dev.max_work_item_sizes.size() > static_cast<std::size_t>(d) &&
        side > dev.max_work_item_sizes[d])
      return Verdict{Status::kInvalidConfig,
                     std::string("work-group ") + (d == 0 ? "x" : "y") + " size " +
                         std::to_string(side) + " exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES[" +
                         std::to_string(d) + "] = " + std::to_string(dev.max_work_item_sizes[d])};
  }
  return std::nullopt;
}

std::size_t tile_local_bytes(const AppDescriptor& app, const Variant& v, WorkGroup wg) {
  if (!uses_local_tile(app, v)) return 0;
  // As kperf_tile.cl lays the tile out: rows padded to 16-byte chunks when the block width is a
  // multiple of 4, by 4 slots each side (8 for half input where the width is a multiple of 8).
  const WorkGroup block = block_of(v, wg);
  const int r = app.radius;
  // The fused li fill of a frame-free scheme reads the next block's first computed line from a
  // tile one period larger along y, and along x where the period is 3 or more
  // (kperf_tile.cl: KPERF_OUT_NEXT_Y, KPERF_OUT_NEXT_X).
  const bool fused_li = !v.output.none() && v.output_recon == Recon::kLi && v.fill().launches == 1;
  // (Not where the blocks overlap: the block holds those lines.)
  const bool next = fused_li && v.scheme->frame_free;
  const int ext_y = next && v.output.ky() > 1 && !blocks_overlap_y(v, wg) ? v.output.ky() : 0;
  const int ext_x = next && v.output.kx() > 2 && !blocks_overlap_x(v, wg) ? v.output.kx() : 0;
  // Blocks that overlap along x start at multiples of a work-item's columns (KPERF_BLOCK_X_ALIGN).
  const int align = blocks_overlap_x(v, wg) ? block.x / wg.x : block.x;
  const int pad = v.precision_info().in->bytes == 2 && align % 8 == 0 ? 8 : 4;
  const int stride =
      align % 4 == 0 && r <= 4 ? block.x + 2 * pad + (ext_x + 3) / 4 * 4 : block.x + 2 * r + ext_x;
  // rows:k li over whole periods reads the kept row below the tile's last rows too
  // (perforate_lines.cl: KPERF_TILE_EXTRA_ROWS).
  const int extra_rows = std::string(v.scheme->family) == "rows" && v.recon == Recon::kLi &&
                                 v.output.ky() == 1 && wg.py % v.skip == 0
                             ? v.skip - 1
                             : 0;
  return static_cast<std::size_t>(stride) *
         static_cast<std::size_t>(block.y + 2 * r + ext_y + extra_rows) * sizeof(float);
}

std::optional<Verdict> check_built_kernel(const cl::Kernel& kernel, const ClEnv& env, WorkGroup wg,
                                          ResultRow::KernelInfo& info) {
  const DeviceInfo& dev = env.info();
  info.max_work_group_size = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env.device());
  info.private_mem_bytes = kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(env.device());
  info.local_mem_bytes = kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(env.device());
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  // KPERF_LAUNCH_PAST_KERNEL_WG=1 launches such a shape anyway, so that the launch itself (ok,
  // or run_failed with its error) says whether the driver's figure binds.
  static const bool launch_past_kernel_wg = std::getenv("KPERF_LAUNCH_PAST_KERNEL_WG") != nullptr;
  if (items > info.max_work_group_size && !launch_past_kernel_wg)
    return Verdict{Status::kInvalidConfig, "work-group of " + std::to_string(items) +
                                               " work-items exceeds this kernel's "
                                               "CL_KERNEL_WORK_GROUP_SIZE " +
                                               std::to_string(info.max_work_group_size)};
  if (info.local_mem_bytes > dev.local_mem_size)
    return Verdict{Status::kInvalidConfig, "kernel needs " + std::to_string(info.local_mem_bytes) +
                                               " bytes of local memory; device has " +
                                               std::to_string(dev.local_mem_size)};
  return std::nullopt;
}

std::string compiler_messages(const cl::Program& program, const cl::Device& device) {
  try {
    std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
    if (log.find_first_not_of(" \t\r\n") == std::string::npos) return std::string();
    return log;
  } catch (const cl::Error&) {
    return std::string();
  }
}

unsigned build_threads(const DeviceInfo& dev) {
  // Oclgrind builds on the calling thread only: its uninitialised-value checker writes a program's
  // program-scope variables through a memory pool that exists on the threads it made, and a build
  // on another thread crashes it (bilateral's weight table, about one run in three with two
  // threads).
  if (dev.platform_name.find("Oclgrind") != std::string::npos) return 1;
  return std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
}

std::size_t cold_flush_bytes(const DeviceInfo& dev,
                             const std::function<std::optional<std::uint64_t>()>& measure_cache) {
  const std::size_t most = static_cast<std::size_t>(dev.max_mem_alloc_size / 2) & ~std::size_t{3};
  if (const char* text = std::getenv("KPERF_FLUSH_BYTES"); text && *text) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && n >= 4)
      return std::min<std::size_t>(n, most) & ~std::size_t{3};
    std::fprintf(stderr, "warning: KPERF_FLUSH_BYTES=%s is not a byte count; ignored\n", text);
  }
  // A fill larger than the cache by half of it: what the probe calls the cache is where reads
  // slow to half way, and a fill of just that size leaves lines of the timed kernel's buffers in
  // it (docs/guide.md). Never under 4x what the driver reports, in case the probe found an inner
  // level. Without a measurement: larger than any last-level cache kperf targets (H100/H200 L2:
  // 50-60 MB; NVIDIA reports a few MB).
  const std::size_t reported = 4 * static_cast<std::size_t>(dev.global_mem_cache_size);
  const std::optional<std::uint64_t> measured = measure_cache ? measure_cache() : std::nullopt;
  const std::size_t bytes =
      measured
          ? std::max(reported,
                     static_cast<std::size_t>(kFlushOverCache * static_cast<double>(*measured)))
          : std::max<std::size_t>(std::size_t{256} << 20, reported);
  return std::min(bytes, most) & ~std::size_t{3};
}

}  // namespace kperf
