// Processes kperf starts (a supervisor's measuring process, a tune's stage workers, compile
// workers) end with the kperf process that started them: none measures on, or writes a file the
// next one also writes, for a parent that is gone.
#pragma once

namespace kperf {

// Call first thing in main(). Where a kperf process started this one (KPERF_PARENT_PID names it),
// the kernel is asked to SIGKILL this process when that parent ends, and this process exits at
// once if the parent already has (it may end between the start and this call). Then names this
// process as the parent of those it starts, which inherit the environment. Linux's signal follows
// the thread that started the child: kperf starts its children on the main thread.
void die_with_kperf_parent();

}  // namespace kperf
