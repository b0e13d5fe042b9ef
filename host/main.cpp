// kperf command line: `kperf devices` lists OpenCL devices; `kperf run` (run_command.cpp) and
// `kperf tune` (tune_command.cpp) are dispatched from here.
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>

#include "check_command.hpp"
#include "cl_env.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "compile_workers.hpp"
#include "fault_journal.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kperf_git_sha.h"  // generated at build time
#include "merge_command.hpp"
#include "parallel.hpp"
#include "pipeline_command.hpp"
#include "process.hpp"
#include "program_sources.hpp"
#include "results.hpp"
#include "run_command.hpp"
#include "runner.hpp"
#include "strings.hpp"
#include "supervisor.hpp"
#include "synthetic.hpp"
#include "tune_command.hpp"
#include "tune_devices.hpp"

namespace fs = std::filesystem;
using namespace kperf;

namespace {

void print_devices_text(const std::vector<DeviceEntry>& entries) {
  for (const auto& e : entries) {
    const DeviceInfo& d = e.info;
    std::printf("%d:%d  %s  [%s]\n", d.platform_index, d.device_index, d.name.c_str(),
                d.type.c_str());
    std::printf("      platform        %s (%s)\n", d.platform_name.c_str(),
                d.platform_version.c_str());
    std::printf("      vendor          %s, driver %s\n", d.vendor.c_str(),
                d.driver_version.c_str());
    std::printf("      OpenCL C        %s\n", d.opencl_c_version.c_str());
    std::printf("      compute units   %u at %u MHz\n", d.compute_units, d.max_clock_mhz);
    std::printf("      global memory   %llu MiB (max allocation %llu MiB), unified: %s\n",
                static_cast<unsigned long long>(d.global_mem_size >> 20),
                static_cast<unsigned long long>(d.max_mem_alloc_size >> 20),
                d.unified_memory ? "yes" : "no");
    std::printf("      local memory    %llu KiB, type %s\n",
                static_cast<unsigned long long>(d.local_mem_size >> 10), d.local_mem_type.c_str());
    std::string items;
    for (auto s : d.max_work_item_sizes) items += (items.empty() ? "" : "x") + std::to_string(s);
    std::printf("      work-group      max %zu, max item sizes %s\n", d.max_work_group_size,
                items.c_str());
    std::printf("      timer           %zu ns resolution\n", d.profiling_timer_resolution_ns);
  }
}

int cmd_devices(int argc, char** argv) {
  cxxopts::Options options("kperf devices", "List every OpenCL platform and device");
  options.add_options()("json", "print JSON")("h,help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.unmatched().empty())
    throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  const auto entries = enumerate_devices();
  if (args.count("json")) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = kSchemaVersion;
    doc["devices"] = nlohmann::ordered_json::array();
    for (const auto& e : entries) doc["devices"].push_back(to_json(e.info));
    std::cout << doc.dump(2) << "\n";
  } else {
    print_devices_text(entries);
  }
  return 0;
}

std::string joined_command_line(int argc, char** argv) {
  std::string out = "kperf";
  for (int i = 0; i < argc; ++i) out += std::string(" ") + argv[i];
  return out;
}

void print_usage() {
  std::printf(
      "kperf %s: OpenCL kernel-perforation benchmark suite\n\n"
      "usage:\n"
      "  kperf devices [--json]      list OpenCL platforms and devices\n"
      "  kperf run [options]         benchmark apps x schemes x work-groups (kperf run --help)\n"
      "  kperf tune [options]        fastest configuration within an error budget, checked on\n"
      "                              held-out inputs (kperf tune --help)\n"
      "  kperf check --app-file F    prove an app perforation-safe on the device (kperf check\n"
      "                              --help)\n"
      "  kperf merge OUT IN...       join the files of kperf run --shard I/N into one\n"
      "  kperf pipeline [options]    chains of apps, each stage at its own approximation\n"
      "                              (kperf pipeline --help; kperf tune --pipeline --help)\n"
      "  kperf --version\n",
      KPERF_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
  die_with_kperf_parent();  // a measuring process or worker does not outlive its kperf parent
#ifdef __GLIBC__
  // glibc maps every block above its dynamic ceiling of 32 MiB afresh and unmaps it when freed,
  // so each 2048^2 grid of doubles (33.5 MB: a truth, its padded copy) faulted its pages in
  // again; from the heap, freed grids are reused (kperf run, median's reference on 6 photos at
  // 2048^2, PoCL: 0.58 s to 0.45 s).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  const std::string command_line = joined_command_line(argc - 1, argv + 1);
  try {
    if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
      print_usage();
      return argc < 2 ? kExitUsage : 0;
    }
    const std::string cmd = argv[1];
    if (cmd == "--version") {
      std::printf("kperf %s (%s, %s)\n", KPERF_VERSION, KPERF_GIT_SHA, KPERF_BUILD_TYPE);
      return 0;
    }
    if (cmd == "__compile-worker") return compile_worker_main(argc - 1, argv + 1);
    if (cmd == "devices") return cmd_devices(argc - 1, argv + 1);
    if (cmd == "__tune-stage") hold_stage_slot();  // one worker per device, whatever restarted
    // A command's own process (not a supervisor's child nor a stage worker) starts its own
    // ledger of the sources it builds.
    if (!std::getenv("KPERF_JOURNAL_EVENTS") && cmd != "__tune-stage")
      forget_inherited_sources_ledger();
    // A bad KPERF_CHECKPOINT_S is one line and exit 2 before anything runs.
    if (cmd == "run" || cmd == "tune") checkpoint_interval_s();
    // Measuring commands run in a child process that a fault loses alone (supervisor.hpp).
    if (!std::getenv("KPERF_JOURNAL_EVENTS") && wants_supervisor(argc, argv))
      return supervise(argc, argv);
    init_journal_from_environment();
    if (cmd == "run" || cmd == "tune" || cmd == "check" || cmd == "pipeline" ||
        cmd == "__tune-stage") {
      const std::string jit_cache = persistent_jit_cache_dir(argc, argv);
      if (jit_cache.empty())
        use_private_jit_cache();
      else
        use_persistent_jit_cache(jit_cache);
    }
    if (cmd == "__tune-stage") return tune_stage_worker_main(argc - 1, argv + 1);
    if (cmd == "run") return cmd_run(argc - 1, argv + 1, command_line);
    // kperf tune --pipeline: the chain tuner (pipeline_tune.cpp), not the one-kernel tuner.
    if (cmd == "tune" && argv_names(argc, argv, {"--pipeline"}))
      return cmd_tune_pipeline(argc - 1, argv + 1, command_line);
    if (cmd == "tune") return cmd_tune(argc - 1, argv + 1, command_line);
    if (cmd == "check") return cmd_check(argc - 1, argv + 1);
    if (cmd == "merge") return cmd_merge(argc - 1, argv + 1, command_line);
    if (cmd == "pipeline") return cmd_pipeline(argc - 1, argv + 1, command_line);
    throw UsageError("unknown command '" + cmd +
                     "' (valid: devices, run, tune, check, merge, pipeline)");
  } catch (const HelpShown&) {
    return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "kperf: %s (see kperf %s --help)\n", e.what(), argc > 1 ? argv[1] : "");
    return kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return kExitDevice;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "kperf: OpenCL error: %s\n", describe(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kperf: %s\n", e.what());
    return 1;
  }
}
