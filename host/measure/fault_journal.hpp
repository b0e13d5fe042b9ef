// The measuring process's side of fault isolation: kperf run, tune and check measure in a child
// process that a supervisor (supervisor.hpp) restarts when a configuration faults the device. The
// child tells its supervisor which configuration is in flight and every row it finishes (the
// journal's events), and reads back what earlier children finished: their rows, the device_fault
// rows of the configurations that killed them, and whether to stop.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kperf {

// A measuring process exits with this status after a configuration faulted the device (its
// device_fault row is journaled): its context cannot be trusted, its supervisor starts another.
constexpr int kExitRestart = 75;

// The device stopped accepting commands (a fault invalidated the queue or context): no further
// device work is possible in this process. The faulting configuration's row is already written.
class DeviceLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads the supervisor's journal and events file from the environment (KPERF_JOURNAL,
// KPERF_JOURNAL_EVENTS) and removes them from it, so that processes this one starts (compile
// workers, a tune's stage workers) are not mistaken for the measuring process. Call first thing.
void init_journal_from_environment();

// Whether a supervisor measures this process (else faults end the command, with its document).
bool supervised();

// A configuration's device work begins (`row`: its described row, with the fields that place it,
// such as a tune's stage) or ends. A crash in between is that configuration's fault.
void journal_begin(const nlohmann::ordered_json& row, const char* phase);
void journal_end();
// A row is final (run: the result row; tune: with its stage).
void journal_row(const nlohmann::ordered_json& row);
// A workload's own device work begins (a user app's truth kernel): `workload` names the app,
// input and size with the run's fields. A crash before journal_end() is the workload's fault.
void journal_begin_workload(const nlohmann::ordered_json& workload, const char* phase);
// The workload's device work faulted the device (`workload` with its "reason"): every
// configuration of it is a device_fault row.
void journal_workload_fault(const nlohmann::ordered_json& workload);

// Programs of configurations not yet begun are compiled together (a run's prebuild): a crash
// before journal_end() is no configuration's; the supervisor has the next process skip it.
void journal_begin_prebuild(std::size_t programs);
// Whether an earlier measuring process crashed in its prebuild: build each program in its own
// configuration's journaled set-up instead, where a crash is that configuration's fault.
bool journal_skip_prebuild();

// The rows earlier measuring processes of this command finished, in order.
const std::vector<nlohmann::json>& journal_rows();
// The device_fault row an earlier process left for the configuration `key` measured with
// `fields` (a tune's stage; empty for run and check), if any.
std::optional<nlohmann::json> journaled_fault(const std::string& key,
                                              const nlohmann::ordered_json& fields);
// The row an earlier process finished for `key` with `fields` (any status), if any.
std::optional<nlohmann::json> journaled_row(const std::string& key,
                                            const nlohmann::ordered_json& fields);
// The reason the workload (as journal_begin_workload names it) faulted an earlier process.
std::optional<std::string> journaled_workload_fault(const nlohmann::ordered_json& workload);
// Non-empty: measure nothing more, write what is measured and stop (three faults in a row, or a
// crash no configuration accounts for); the text says why.
const std::string& journal_stop();
// How many measuring processes ran before this one.
int journal_restarts();

// A std::_Exit that flushes stdout and stderr first: a process whose device faulted does not run
// the OpenCL driver's teardown.
[[noreturn]] void exit_for_restart();

}  // namespace kperf
