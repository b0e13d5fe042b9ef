// Children that end with their kperf parent (see process.hpp).
#include "process.hpp"

#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cstdlib>
#include <string>

namespace kperf {

void die_with_kperf_parent() {
  if (const char* text = std::getenv("KPERF_PARENT_PID"); text && *text) {
    const long parent = std::strtol(text, nullptr, 10);
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    // The parent ended before the request above: this process was handed to another one.
    if (parent > 0 && ::getppid() != static_cast<pid_t>(parent)) std::_Exit(1);
  }
  ::setenv("KPERF_PARENT_PID", std::to_string(::getpid()).c_str(), 1);
}

}  // namespace kperf
