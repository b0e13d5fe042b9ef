// KPERF_FAULT, the test hook for the failure paths (injected_faults.hpp).
#include "injected_faults.hpp"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "cl_env.hpp"
#include "fault_journal.hpp"

namespace kperf {

std::atomic<long> configurations_timed{0};

bool fault(const std::string& kind) {
  static const std::string spec = [] {
    const char* env = std::getenv("KPERF_FAULT");
    return env ? std::string(env) : std::string();
  }();
  return !spec.empty() && spec.rfind(kind, 0) == 0;
}

bool fault_at(const std::string& kind, std::atomic<long>& count) {
  if (!fault(kind + ":")) return false;
  const long at = std::atol(std::getenv("KPERF_FAULT") + kind.size() + 1);
  return ++count == at;
}

std::optional<std::string> fault_argument(const std::string& kind) {
  if (!fault(kind + ":")) return std::nullopt;
  return std::string(std::getenv("KPERF_FAULT") + kind.size() + 1);
}

bool fault_hits(const std::string& kind, const std::string& key, const std::string& stage) {
  const auto argument = fault_argument(kind);
  if (!argument) return false;
  // TEXT, then the qualifiers, each after a ';' (keys hold no ';').
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = argument->find(';', start)) != std::string::npos; start = end + 1)
    parts.push_back(argument->substr(start, end - start));
  parts.push_back(argument->substr(start));
  if (key.find(parts[0]) == std::string::npos) return false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& q = parts[i];
    if (q.rfind("stage=", 0) == 0) {
      if (q.substr(6) != stage) return false;
    } else if (q.rfind("input=", 0) == 0) {
      // A key names its input between slashes, before the size (results.hpp, pipeline.hpp).
      if (key.find("/" + q.substr(6) + "/") == std::string::npos) return false;
    } else {
      throw std::invalid_argument("KPERF_FAULT: unknown qualifier '" + q +
                                  "' (valid: stage=NAME, input=NAME)");
    }
  }
  return true;
}

void injected_stop_after_row() {
  static std::atomic<long> rows{0};
  const int sig = fault("interrupt-after:") ? SIGINT
                  : fault("term-after:")    ? SIGTERM
                  : fault("kill-after:")    ? SIGKILL
                                            : 0;
  if (sig == 0) return;
  const long after = std::atol(std::strchr(std::getenv("KPERF_FAULT"), ':') + 1);
  if (++rows != after) return;
  // SIGKILL: the whole command at once, as `kill -9` of its process group, with no chance to
  // write anything more. SIGINT and SIGTERM: through the supervisor's handler, which forwards them
  // here; raised here too, so that this process has seen it before it starts the next
  // configuration, whenever the forwarded one arrives.
  if (supervised()) ::kill(::getppid(), sig);
  std::raise(sig);
}

bool injected_launch_fault(const std::string& key, const std::string& stage) {
  if (fault_hits("crash", key, stage)) {
    std::signal(SIGSEGV, SIG_DFL);  // as the driver's own crash: no handler between
    std::raise(SIGSEGV);
  }
  if (fault_hits("cl-error", key, stage))
    throw cl::Error(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel (injected: KPERF_FAULT=cl-error)");
  return fault_hits("lose-queue", key, stage);
}

}  // namespace kperf
