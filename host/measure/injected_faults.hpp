// Test hook for the failure paths (tests/cli_tests.cpp, tests/fault_test.py), from the
// environment's KPERF_FAULT: "save" (every --save-outputs write fails), "alloc:N" (the Nth
// configuration or chain set up runs out of host memory), "workload:N" (the Nth workload's input
// fails to load), "crash:KEY", "lose-queue:KEY" and "cl-error:KEY" (injected_launch_fault),
// "interrupt-after:N", "term-after:N" and "kill-after:N" (injected_stop_after_row). Elsewhere:
// "crash-build:TEXT" (cl_env.cpp), "hang-compile:TEXT" (compile_workers.cpp), "hang-stage:NAME"
// (tune_devices.cpp), "slow-spawn" (supervisor.cpp).
#pragma once

#include <atomic>
#include <optional>
#include <string>

namespace kperf {

bool fault(const std::string& kind);
bool fault_at(const std::string& kind, std::atomic<long>& count);
// The text after "KIND:" in KPERF_FAULT when it names that kind, else nullopt.
std::optional<std::string> fault_argument(const std::string& kind);
// Whether KPERF_FAULT=KIND:TEXT[;stage=STAGE][;input=INPUT] hits the configuration or chain
// `key` measured in `stage` (a tune's stage, its journal field; "" elsewhere): TEXT is part of
// the key, and each qualifier given holds (the key names INPUT as its input). An unknown
// qualifier throws std::invalid_argument.
bool fault_hits(const std::string& kind, const std::string& key, const std::string& stage);
// KPERF_FAULT=crash:KEY / lose-queue:KEY / cl-error:KEY at the launch of the configuration or
// chain `key` in `stage`: crash dies of SIGSEGV, as a driver's wild read does; cl-error throws
// CL_OUT_OF_RESOURCES as a refused launch on a healthy device (the probe that follows is real);
// lose-queue returns true, and the caller loses its device (its probe fails from then on).
bool injected_launch_fault(const std::string& key, const std::string& stage);
// KPERF_FAULT=interrupt-after:N / term-after:N / kill-after:N: called once a row is finished
// (handed on, its checkpoint written); at this process's Nth, SIGINT, SIGTERM or SIGKILL to the
// supervisor (which forwards the first two) and to this process.
void injected_stop_after_row();

// Configurations and chains set up so far in this process (KPERF_FAULT=alloc:N counts them).
extern std::atomic<long> configurations_timed;

}  // namespace kperf
