// kperf tune --devices: the worker processes (`kperf __tune-stage REQUEST`, one per device after
// the first) that measure their shares of a stage (commands/tune_device_list.hpp resolves the
// devices).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results.hpp"

namespace kperf {

// One device's share of a stage, measured by a worker process.
class StageWorker {
 public:
  // Writes `request` to a scratch file, adding the device and where the rows go, and starts the
  // worker, which has stage_timeout_s() for the request's units on `inputs` inputs from now. A
  // worker that cannot start is reported by finish().
  StageWorker(nlohmann::ordered_json request, int slot, const std::string &selector,
              std::size_t inputs);
  ~StageWorker();  // stops and reaps a worker that finish() did not
  StageWorker(const StageWorker &) = delete;
  StageWorker &operator=(const StageWorker &) = delete;

  struct Result {
    std::vector<ResultRow> rows;  // whatever it measured, also when it failed
    double copy_gbps = 0;
    nlohmann::json phases = nlohmann::json::object();
    bool interrupted = false;
    std::string problem;  // why it failed ("" when it did not)
    // Why the configurations it did not return were not measured: it ran past its time limit and
    // was killed ("" when it ended by itself). Not a problem: the tune goes on without them.
    std::string lost;
  };
  // Waits for the worker, first asking it to stop when `stop`, until its time limit; a worker
  // still running then is killed (SIGKILL: its own processes end with it) and `lost` says so.
  Result finish(bool stop);
  int slot() const { return slot_; }
  const nlohmann::ordered_json &request() const { return request_; }

 private:
  pid_t pid_ = -1;
  int slot_ = 0;
  std::string selector_, request_path_, rows_path_, spawn_error_;
  nlohmann::ordered_json request_;
  double limit_s_ = 0;
  std::chrono::steady_clock::time_point deadline_;
};

// How long a worker may take over a share of `configurations` (units' shapes times inputs):
// $KPERF_STAGE_TIMEOUT seconds where it is a number above 0 (tests), else 10 minutes plus a minute
// per configuration, far beyond what measuring one takes (seconds, its compile included), so
// that only a worker that stopped answering (a hung kernel or driver) meets it.
double stage_timeout_s(std::size_t configurations);

// The worker's side, first thing: waits until no other worker holds this one's device slot (the
// lock StageWorker names in KPERF_STAGE_LOCK), then holds it until this process and those it
// starts end. A measuring process restarted after a fault thus never has two workers on a slot.
void hold_stage_slot();

// The worker's side, before it measures its share of stage `stage`. Test hook
// (tests/process_test.py): KPERF_FAULT=hang-stage:NAME hangs every worker measuring a share of
// stage NAME, for good, as a worker whose device never answers.
void injected_stage_hang(const std::string &stage);

// The worker's side: the rows measured so far, written atomically where finish() reads them.
void write_stage_rows(const std::string &path, const std::vector<ResultRow> &rows, double copy_gbps,
                      const nlohmann::ordered_json &phases);

}  // namespace kperf
