// Compiling a run's programs in worker processes: NVIDIA's and PoCL's compilers serialise the
// builds of one process, so the programs are spread over child processes, kept for the whole
// command, that leave binaries in the program-binary cache, which the parent then loads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cl_env.hpp"

namespace kperf {

// A directory private to this kperf process (created on first use under $TMPDIR, removed with
// its contents when the process that made it exits), or its supervisor's (KPERF_SCRATCH_DIR).
const std::string& scratch_dir();

// Points NVIDIA's JIT cache at a fresh directory of scratch_dir() and turns it on. NVIDIA's cache
// keys source builds on the top-level file only and so misses edits of #included scheme files
// across runs; a cache that lives for one run cannot be stale, and it is how the parent reuses
// the machine code its workers compiled. Call before the first OpenCL call.
void use_private_jit_cache();
// NVIDIA's JIT cache in `dir`, kept from run to run. Safe only where every source a run builds
// is named by `dir`: persistent_jit_cache_dir() puts a digest of every kernel and scheme file in
// the name.
void use_persistent_jit_cache(const std::string& dir);

// How many worker processes compile_in_workers() uses: KPERF_COMPILE_WORKERS when set (0 or 1:
// none), else the hardware threads, at most 16. Without KPERF_COMPILE_WORKERS, only GPU devices
// get workers.
unsigned compile_worker_count();

// Seconds a compile worker may spend on one program before it is killed: KPERF_COMPILE_TIMEOUT
// when set (a positive number), else 300.
double compile_timeout_s();

// Compiles the (source, options) pairs that `env` has neither built nor cached in worker
// processes of `worker_exe` (`kperf __compile-worker --serve`), which store the binaries in env's
// binary cache (turned on in scratch_dir() when the user gave none) for this process to load.
// The workers are started by the first call with enough programs for them (at least 8; up to
// compile_worker_count(), one per 4 programs) and live until this process ends: later calls pay
// no start, and hand them even one program. Each worker is handed one program at a time. A
// program a worker cannot build is left to this process, whose build() reports the log. A worker
// that dies of a crash signal (a compiler crash) leaves the program it was building in `crashed`:
// built in this process it would crash it too, so the caller builds it where a crash is that
// configuration's fault. A worker that spends more than compile_timeout_s() on one program is
// killed and the program recorded in env as a failed build saying so
// (`timed_out`); a worker's start charges no program. Programs no worker reached (every worker
// gone) are left to this process. GPUs under 32 GiB end the workers after each batch: their
// contexts would hold device memory while the run measures.
// Returns how many workers took part, how many started for this call, how many programs went to
// them and whether they got a batch (batches 1; none when too few programs to be worth a start).
struct WorkerCompile {
  std::size_t processes = 0, starts = 0, programs = 0, batches = 0;
  std::vector<std::size_t> crashed, timed_out;  // indices into `jobs`
};
WorkerCompile compile_in_workers(ClEnv& env, const std::string& worker_exe,
                                 const std::vector<std::pair<std::string, std::string>>& jobs);

// The worker's entry point: `kperf __compile-worker --serve HEADER_FILE --fd N` (the header: the
// cache directory, salt, platform and device), saying "ready" on descriptor N once its context
// exists, then taking "load JOBS_FILE" and "build I" and answering "built I", until the pool
// closes it.
int compile_worker_main(int argc, char** argv);

}  // namespace kperf
