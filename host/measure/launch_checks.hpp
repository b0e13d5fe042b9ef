// What decides whether a launch can run on a device, before and after its program is built: the
// scheme's validity, the device's work-group limits, the tile's local memory, the built kernel's
// own limits; and the device figures a measurement is set up from (build threads, the cache
// flush). The same for a configuration and for every launch of a chain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "apps.hpp"
#include "cl_env.hpp"
#include "results.hpp"
#include "schemes.hpp"

namespace kperf {

// Why `app` under variant `v` cannot launch as `wg` on a device with these limits (scheme
// validity, CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES, local memory), judged
// before anything is built. The kernel's own CL_KERNEL_WORK_GROUP_SIZE is checked after building.
std::optional<Verdict> check_launch(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                    const DeviceInfo& dev);
// Why a work-group of this shape cannot launch on the device (CL_DEVICE_MAX_WORK_GROUP_SIZE,
// CL_DEVICE_MAX_WORK_ITEM_SIZES): check_launch's part that any kernel shares.
std::optional<Verdict> check_work_group(WorkGroup wg, const DeviceInfo& dev);
// Local memory the tile of this launch needs, as kperf_tile.cl lays it out (0 without a tile).
std::size_t tile_local_bytes(const AppDescriptor& app, const Variant& v, WorkGroup wg);

// What every launch checks of its kernel once built: the launch shape against its
// CL_KERNEL_WORK_GROUP_SIZE (unless KPERF_LAUNCH_PAST_KERNEL_WG) and its local memory against the
// device's; an invalid_config verdict, or nothing. `info` receives the kernel's figures.
std::optional<Verdict> check_built_kernel(const cl::Kernel& kernel, const ClEnv& env, WorkGroup wg,
                                          ResultRow::KernelInfo& info);
// What the compiler said about a program that built (its warnings); empty where it said nothing
// but blanks.
std::string compiler_messages(const cl::Program& program, const cl::Device& device);
// Threads that build programs at once for a device: one under Oclgrind.
unsigned build_threads(const DeviceInfo& dev);
// The bytes --cold fills before every timed sample on a device: kFlushOverCache times the
// last-level cache `measure_cache` finds (command_cache_probe; asked only when needed), never
// under 4x the cache the device reports; without a measurement 256 MiB or that 4x. Within half
// the largest allocation. $KPERF_FLUSH_BYTES=N sets N bytes instead: to test the rule, and how a
// command hands its choice to the processes it starts (kperf tune's stage workers).
constexpr double kFlushOverCache = 1.5;
std::size_t cold_flush_bytes(const DeviceInfo& dev,
                             const std::function<std::optional<std::uint64_t>()>& measure_cache);

}  // namespace kperf
