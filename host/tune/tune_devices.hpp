// kperf tune --devices: the worker processes (`kperf __tune-stage REQUEST`, one per device after
// the first) that measure their shares of a stage (commands/tune_device_list.hpp resolves the
// devices).
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results.hpp"

namespace kperf {

// One device's share of a stage, measured by a worker process.
class StageWorker {
 public:
  // Writes `request` to a scratch file, adding the device and where the rows go, and starts the
  // worker. A worker that cannot start is reported by finish().
  StageWorker(nlohmann::ordered_json request, int slot, const std::string &selector);
  ~StageWorker();  // stops and reaps a worker that finish() did not
  StageWorker(const StageWorker &) = delete;
  StageWorker &operator=(const StageWorker &) = delete;

  struct Result {
    std::vector<ResultRow> rows;  // whatever it measured, also when it failed
    double copy_gbps = 0;
    nlohmann::json phases = nlohmann::json::object();
    bool interrupted = false;
    std::string problem;  // why it failed ("" when it did not)
  };
  // Waits for the worker, first asking it to stop when `stop`.
  Result finish(bool stop);
  int slot() const { return slot_; }

 private:
  pid_t pid_ = -1;
  int slot_ = 0;
  std::string selector_, request_path_, rows_path_, spawn_error_;
};

// The worker's side, first thing: waits until no other worker holds this one's device slot (the
// lock StageWorker names in KPERF_STAGE_LOCK), then holds it until this process and those it
// starts end. A measuring process restarted after a fault thus never has two workers on a slot.
void hold_stage_slot();

// The worker's side: the rows measured so far, written atomically where finish() reads them.
void write_stage_rows(const std::string &path, const std::vector<ResultRow> &rows, double copy_gbps,
                      const nlohmann::ordered_json &phases);

}  // namespace kperf
