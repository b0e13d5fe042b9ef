// The supervisor of measuring processes (see supervisor.hpp).
#include "supervisor.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "compile_workers.hpp"
#include "fault_journal.hpp"
#include "gzip.hpp"
#include "io.hpp"
#include "kernel_root.hpp"

extern char** environ;

namespace kperf {

namespace {

volatile sig_atomic_t child_pid = 0;
volatile sig_atomic_t interrupted = 0;

// Ctrl-C reaches the child from the terminal; a signal sent to the supervisor alone is passed on.
// Either way the child finishes its configuration in flight and writes what it measured.
void forward_signal(int sig) {
  interrupted = 1;
  if (child_pid > 0) ::kill(static_cast<pid_t>(child_pid), sig);
}

bool crash_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
         sig == SIGTRAP || sig == SIGSYS;
}

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "unknown") + ")";
}

// What one child left in its events file: the rows it finished, the workloads whose own device
// work faulted, and the configuration or workload it was in.
struct ChildEvents {
  std::vector<nlohmann::json> rows, workload_faults;
  nlohmann::json in_flight;           // the begun configuration's row, null when none
  nlohmann::json in_flight_workload;  // the begun workload, null when none
  std::string phase;
};

ChildEvents read_events(const std::string& path) {
  ChildEvents out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json event;
    try {
      event = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      break;  // a line cut short by the crash: nothing after it was written
    }
    if (event.contains("begin")) {
      out.in_flight = event["begin"];
      out.phase = event.value("phase", std::string());
    } else if (event.contains("begin_workload")) {
      out.in_flight_workload = event["begin_workload"];
      out.phase = event.value("phase", std::string());
    } else if (event.contains("end")) {
      out.in_flight = out.in_flight_workload = nullptr;
    } else if (event.contains("row")) {
      out.rows.push_back(event["row"]);
    } else if (event.contains("workload_fault")) {
      out.workload_faults.push_back(event["workload_fault"]);
    }
  }
  return out;
}

// Whether a child measured anything but faults: a fault after it starts a new run of faults.
bool measured_something(const ChildEvents& events) {
  for (const auto& row : events.rows)
    if (row.value("status", std::string()) != "device_fault") return true;
  return false;
}

std::string workload_label(const nlohmann::json& workload) {
  return workload.value("app", std::string()) + " on " + workload.value("input", std::string()) +
         " (its truth kernel)";
}

pid_t spawn_child(char** argv, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& extra : extra_env)
      replaced =
          replaced || entry.compare(0, extra.find('=') + 1, extra, 0, extra.find('=') + 1) == 0;
    if (!replaced) env_strings.push_back(entry);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const std::string exe = executable_path().string();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data());
  if (rc != 0)
    throw std::runtime_error("cannot start kperf's measuring process: " +
                             std::string(std::strerror(rc)));
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // namespace

bool wants_supervisor(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command != "run" && command != "tune" && command != "check" && command != "pipeline" &&
      command != "__tune-stage")
    return false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    // A dry run launches nothing; --help prints.
    if (arg == "--dry-run" || arg == "--help" || arg == "-h") return false;
  }
  const char* setting = std::getenv("KPERF_SUPERVISE");
  return !(setting && std::string(setting) == "0");
}

int supervise(int argc, char** argv) {
  (void)argc;
  // One scratch directory for every child, so that a restarted child reuses the programs its
  // predecessors compiled (the binary and NVIDIA JIT caches live there); removed at exit. Its
  // own, also when this supervisor runs under another (a tune's stage worker).
  ::unsetenv("KPERF_SCRATCH_DIR");
  const std::string dir = scratch_dir();
  const std::string events_path = dir + "/journal-events.jsonl";
  const std::string journal_path = dir + "/journal.json";
  struct sigaction action {};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  std::vector<nlohmann::json> rows, workload_faults;
  std::string stop;
  int restarts = 0, faults_in_a_row = 0;
  for (;;) {
    std::vector<std::string> env = {"KPERF_JOURNAL_EVENTS=" + events_path,
                                    "KPERF_SCRATCH_DIR=" + dir};
    if (restarts > 0 || !stop.empty()) {
      nlohmann::json journal = {{"rows", rows},
                                {"workload_faults", workload_faults},
                                {"stop", stop},
                                {"restarts", restarts}};
      write_document_atomic(journal_path, journal.dump());
      env.push_back("KPERF_JOURNAL=" + journal_path);
    }
    std::ofstream(events_path, std::ios::trunc).close();
    const pid_t pid = spawn_child(argv, env);
    child_pid = pid;
    const int status = wait_child(pid);
    child_pid = 0;
    ChildEvents events = read_events(events_path);
    rows.insert(rows.end(), events.rows.begin(), events.rows.end());
    workload_faults.insert(workload_faults.end(), events.workload_faults.begin(),
                           events.workload_faults.end());

    if (WIFEXITED(status) && WEXITSTATUS(status) != kExitRestart) return WEXITSTATUS(status);
    if (!stop.empty()) {
      std::fprintf(stderr, "kperf: the measuring process failed again after stopping (%s)\n",
                   stop.c_str());
      return 1;
    }
    std::string fault;  // the faulting configuration's key and what happened
    if (WIFEXITED(status)) {
      // The child journaled the faulting configuration's row, or its workload's fault, with the
      // driver's words.
      if (!events.workload_faults.empty())
        fault = workload_label(events.workload_faults.back()) + ": " +
                events.workload_faults.back().value("reason", std::string());
      else if (!events.rows.empty() &&
               events.rows.back().value("status", std::string()) == "device_fault")
        fault = events.rows.back().value("key", std::string()) + ": " +
                events.rows.back().value("reason", std::string());
      else
        stop = "the device stopped accepting commands outside any configuration's device work";
    } else if (WIFSIGNALED(status) && crash_signal(WTERMSIG(status))) {
      const std::string what = "the measuring process died of " + signal_text(WTERMSIG(status));
      const std::string where =
          " during this " +
          std::string(events.in_flight.is_null() ? "workload's " : "configuration's ") +
          events.phase + " (a crash inside the OpenCL driver)";
      if (!events.in_flight.is_null()) {
        nlohmann::json row = events.in_flight;
        row["status"] = "device_fault";
        row["reason"] = what + where;
        rows.push_back(row);
        fault = row.value("key", std::string()) + ": " + what;
      } else if (!events.in_flight_workload.is_null()) {
        nlohmann::json workload = events.in_flight_workload;
        workload["reason"] = what + where;
        workload_faults.push_back(workload);
        fault = workload_label(workload) + ": " + what;
      } else {
        stop = what + " outside any configuration's device work";
      }
    } else if (WIFSIGNALED(status) &&
               (interrupted || WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
      return 130;  // interrupted before it could write anything
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) {
      return 128 + SIGPIPE;  // its reader went away (kperf ... | head)
    } else {
      stop = "the measuring process was killed by " + signal_text(WTERMSIG(status));
    }
    if (interrupted) {
      // Ctrl-C during a fault: write what was measured, then stop.
      stop = "interrupted";
    } else if (!fault.empty()) {
      faults_in_a_row = measured_something(events) ? 1 : faults_in_a_row + 1;
      const bool stopping = faults_in_a_row >= kFaultsInARow;
      std::fprintf(stderr, "kperf: device fault in %s; %s\n", fault.c_str(),
                   stopping ? "stopping" : "measuring on in a new process");
      if (stopping)
        stop = std::to_string(faults_in_a_row) + " configurations in a row faulted the device";
    }
    ++restarts;
  }
}

}  // namespace kperf
