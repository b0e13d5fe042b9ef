// What the runner's files share (runner.cpp: the configuration loop; runner_workload.cpp: a
// workload's inputs and truth; runner_config.cpp: one configuration's build, buffers and
// attempt; config_timing.cpp: timing it; config_outputs.cpp: its error, verification and saved
// output): the workload
// and its device data, the launches of one sample, the harness's phase timer and fault hooks.
// Not part of kperf's interface.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "device_input.hpp"
#include "device_upload.hpp"
#include "output_buffers.hpp"
#include "runner.hpp"

namespace kperf {

struct Abandoned {};  // an interrupt arrived mid-configuration
struct Stopped {};    // the journal says to measure nothing more (fault_journal.hpp)

// Test hook for the failure paths (tests/cli_tests.cpp), from the environment's KPERF_FAULT:
// "save" (every --save-outputs write fails), "alloc:N" (the Nth configuration timed runs out of
// host memory), "workload:N" (the Nth workload's input fails to load), "crash:KEY",
// "lose-queue:KEY" and "cl-error:KEY" (Runner::injected_launch_fault, and chains in
// pipeline.cpp), "interrupt-after:N", "term-after:N" and "kill-after:N" (injected_stop_after_row).
// Elsewhere: "crash-build:TEXT" (cl_env.cpp), "hang-compile:TEXT" (compile_workers.cpp),
// "hang-stage:NAME" (tune_devices.cpp), "slow-spawn" (supervisor.cpp).
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

double now_s();

// A saved output's file name from its result key: '/' as "__", ':' as '-', a chain's " > " as
// '+', then ".npy".
std::string key_to_filename(const std::string& key);

// What every launch checks of its kernel once built, a configuration's or a chain's: the launch
// shape against its CL_KERNEL_WORK_GROUP_SIZE (unless KPERF_LAUNCH_PAST_KERNEL_WG) and its local
// memory against the device's; an invalid_config verdict, or nothing. `info` receives the
// kernel's figures.
std::optional<Verdict> check_built_kernel(const cl::Kernel& kernel, const ClEnv& env, WorkGroup wg,
                                          ResultRow::KernelInfo& info);
// Threads that build programs at once for a device: one under Oclgrind.
unsigned build_threads(const DeviceInfo& dev);

// Configurations timed so far in this process (KPERF_FAULT=alloc:N counts them).
extern std::atomic<long> configurations_timed;
// A configuration's key (results.hpp's make_key over every axis, shape and input).
std::string config_key(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input, int width, int height);
// A row naming the configuration: app, every axis, launch shape, input; nothing measured yet.
ResultRow describe_row(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input_name, int width, int height, int iterations);

// Adds the wall time of its scope to one phase of the harness breakdown.
class PhaseTimer {
 public:
  PhaseTimer(std::map<std::string, double>& phases, const char* name)
      : phases_(phases), name_(name), start_(now_s()) {}
  ~PhaseTimer() { phases_[name_] += now_s() - start_; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  std::map<std::string, double>& phases_;
  const char* name_;
  double start_;
};

// Device buffers of the current input size, shared by every app and input of that size and
// replaced when the size changes.
struct DeviceBuffers {
  OutputBuffers out;
  cl::Buffer power[kStorageTypes];  // hotspot's power grid per storage type
};

// One app on one input: its data, its reference and the device inputs made for it.
struct Workload {
  const AppDescriptor* app = nullptr;
  std::string input_name;
  int width = 0, height = 0;
  Grid input;                 // hotspot: the temperature
  std::optional<Grid> power;  // the second input, where the app has one (hotspot: power)
  GridD input_d;              // the inputs in double, for the reference and --verify
  std::optional<GridD> power_d;
  GridD truth;
  // Non-finite elements of the truth, and whether every input value is finite: where it is, an
  // output with more non-finite elements than the truth is not a measurement (run_failed).
  std::int64_t truth_nonfinite = 0;
  bool input_finite = true;
  bool device_truth = false;  // the truth is on the device: metrics are computed there
  std::string alloc_problem;  // non-empty: every configuration is invalid_config
  // A user app whose truth kernel does not build (or faulted the device): every configuration is
  // a row of truth_status (build_failed, device_fault) with that reason.
  std::string truth_problem, truth_log, truth_status = "build_failed";
  std::string reference;         // each row's reference field
  std::string note;              // caveat copied onto every row
  DeviceBuffers* buf = nullptr;  // the runner's buffers for this size
  // Iterated apps: canary guards around the initial state, per storage type (storage_index).
  std::vector<unsigned char> in_init[kStorageTypes];
  std::map<std::string, DeviceUpload> uploads;  // device inputs by layout (precision, packing)
  std::vector<float> float_args;                // the app's float kernel arguments (traits)
};

// One launch of the app kernel and, under a two-launch output scheme, the fill kernel after it.
struct LaunchStep {
  cl::Kernel app;
  std::optional<cl::Kernel> fill;
};

// What one timed sample enqueues: `launches` steps (hotspot alternates two output buffers),
// each with its fill kernel where there is one. Every launch has its own event.
struct SampleLaunches {
  std::vector<LaunchStep>* steps = nullptr;
  cl::NDRange global, local, fill_global, fill_local;
  int launches = 1;
  bool ping_pong() const { return steps->size() > 1; }
  // The output buffer that holds the result after a sample.
  int final_buffer() const { return ping_pong() ? launches % 2 : 0; }
  int events() const { return launches * ((*steps)[0].fill ? 2 : 1); }
  void enqueue(cl::CommandQueue& queue, std::vector<cl::Event>* events) const;
};

// The launches of one sample of `steps` on a width x height grid, with the fill kernel's
// geometry under a two-launch output scheme (Runner::sample_launches; kperf pipeline's stages).
SampleLaunches make_sample_launches(const ClEnv& env, const Variant& v, int width, int height,
                                    std::vector<LaunchStep>& steps, const cl::NDRange& global,
                                    const cl::NDRange& local, int launches);

// A configuration set up to launch: built, checked, its input on the device. --rounds holds every
// configuration of a workload like this while it times them in turn. `sample` points into
// `steps`, so a PreparedConfig stays where it was made.
struct PreparedConfig {
  const Variant* variant = nullptr;
  WorkGroup wg;
  std::string key;
  ResultRow row;
  std::vector<LaunchStep> steps;
  SampleLaunches sample;
  DeviceUpload* input = nullptr;
  PreparedConfig() = default;
  PreparedConfig(const PreparedConfig&) = delete;
  PreparedConfig& operator=(const PreparedConfig&) = delete;
};

}  // namespace kperf
