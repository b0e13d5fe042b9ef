// Fault isolation: kperf run, tune, check and pipeline measure in a child process, which this
// supervisor starts again when a configuration faults the device. A fault is a signal inside the
// driver (PoCL's SIGSEGV on a wild read) or an error that invalidates the queue or context
// (NVIDIA's CL_INVALID_COMMAND_QUEUE, then CL_OUT_OF_RESOURCES on every call): on NVIDIA a context
// that faulted cannot be trusted in the same process, and a signal leaves no process to trust. The
// faulting configuration becomes a device_fault row, and the next child resumes after it from the
// journal (fault_journal.hpp), so rows before and after the fault are those of a run without it.
// The supervisor makes no OpenCL call.
#pragma once

#include <string>

namespace kperf {

// The command's status when any configuration faulted the device, or a tune verdict could not be
// measured: the document is complete and valid, its device_fault rows say what was lost.
constexpr int kExitFaulted = 4;
// How many faults in a row stop a run (every row measured is still written).
constexpr int kFaultsInARow = 3;

// Whether this command line (argv as main() has it) measures under a supervisor: run, tune (with
// --pipeline too), check, pipeline and a tune's stage worker, but not --dry-run or --help, and
// not with KPERF_SUPERVISE=0 (one process, as a debugger wants it).
bool wants_supervisor(int argc, char** argv);

// Runs this kperf command (argv as main() has it) in a child process until it finishes, starting a
// new child after each fault; returns the command's exit status.
int supervise(int argc, char** argv);

}  // namespace kperf
