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
#include "strings.hpp"

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

// Installs forward_signal for SIGINT and SIGTERM (`forwarded`) and blocks them, returning the mask
// before (`normal`). They wait, blocked, whenever no child's pid is known: one that comes while a
// child starts, or between two children, is forwarded once the pid is recorded, never lost. The
// child starts with the mask `normal`.
void forward_signals(sigset_t& forwarded, sigset_t& normal) {
  struct sigaction action {};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigemptyset(&forwarded);
  ::sigaddset(&forwarded, SIGINT);
  ::sigaddset(&forwarded, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &forwarded, &normal);
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
  bool in_prebuild = false;           // compiling programs of no one configuration yet
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
    } else if (event.contains("begin_prebuild")) {
      out.in_prebuild = true;
    } else if (event.contains("end")) {
      out.in_flight = out.in_flight_workload = nullptr;
      out.in_prebuild = false;
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

// `mask`: the child's signal mask (the supervisor's own blocks the signals it forwards meanwhile).
pid_t spawn_child(char** argv, const std::vector<std::string>& extra_env, const sigset_t& mask) {
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
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setsigmask(&attr, &mask);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, &attr, argv, envp.data());
  ::posix_spawnattr_destroy(&attr);
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

// What the supervisor carries from child to child: the journal it hands the next one.
struct SupervisorState {
  std::vector<nlohmann::json> rows, workload_faults;
  std::string stop;
  int restarts = 0, faults_in_a_row = 0;
  bool skip_prebuild = false;
};

// A child died of a crash signal: charges the configuration or workload in flight (returning what
// faulted), has the next child skip its prebuild after a crash there, or stops.
std::string account_for_crash(const ChildEvents& events, int sig, SupervisorState& state) {
  const std::string what = "the measuring process died of " + signal_text(sig);
  const std::string where =
      " during this " +
      std::string(events.in_flight.is_null() ? "workload's " : "configuration's ") + events.phase +
      " (a crash inside the OpenCL driver)";
  if (!events.in_flight.is_null()) {
    nlohmann::json row = events.in_flight;
    row["status"] = "device_fault";
    row["reason"] = what + where;
    state.rows.push_back(row);
    return row.value("key", std::string()) + ": " + what;
  }
  if (!events.in_flight_workload.is_null()) {
    nlohmann::json workload = events.in_flight_workload;
    workload["reason"] = what + where;
    state.workload_faults.push_back(workload);
    return workload_label(workload) + ": " + what;
  }
  if (events.in_prebuild && !state.skip_prebuild) {
    // The compiler crashed on a program built ahead of its configurations: from now on each is
    // built in its configuration's journaled set-up, where such a crash is that configuration's
    // device_fault row (faults.md). Nothing is charged to anyone yet.
    state.skip_prebuild = true;
    std::fprintf(stderr,
                 "kperf: %s while compiling programs ahead of their configurations; building "
                 "each in its own configuration from now on\n",
                 what.c_str());
    return std::string();
  }
  state.stop = what + " outside any configuration's device work";
  return std::string();
}

}  // namespace

bool wants_supervisor(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command != "run" && command != "tune" && command != "check" && command != "pipeline" &&
      command != "__tune-stage")
    return false;
  // A dry run launches nothing; --help prints.
  if (argv_names(argc, argv, {"--dry-run", "--help", "-h"})) return false;
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
  sigset_t forwarded, normal;
  forward_signals(forwarded, normal);
  // Test hook (tests/process_test.py): a pause between the child's start and the recording of its
  // pid, the window a signal used to be lost in.
  const char* fault_spec = std::getenv("KPERF_FAULT");
  const bool slow_spawn = fault_spec && std::string(fault_spec) == "slow-spawn";

  SupervisorState state;
  for (;;) {
    std::vector<std::string> env = {"KPERF_JOURNAL_EVENTS=" + events_path,
                                    "KPERF_SCRATCH_DIR=" + dir};
    if (state.restarts > 0 || !state.stop.empty()) {
      nlohmann::json journal = {{"rows", state.rows},
                                {"workload_faults", state.workload_faults},
                                {"stop", state.stop},
                                {"restarts", state.restarts},
                                {"skip_prebuild", state.skip_prebuild}};
      write_document_atomic(journal_path, journal.dump());
      env.push_back("KPERF_JOURNAL=" + journal_path);
    }
    std::ofstream(events_path, std::ios::trunc).close();
    const pid_t pid = spawn_child(argv, env, normal);
    if (slow_spawn) ::sleep(2);
    child_pid = pid;
    ::sigprocmask(SIG_SETMASK, &normal, nullptr);  // a signal that came meanwhile is forwarded now
    const int status = wait_child(pid);
    ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
    child_pid = 0;
    ChildEvents events = read_events(events_path);
    state.rows.insert(state.rows.end(), events.rows.begin(), events.rows.end());
    state.workload_faults.insert(state.workload_faults.end(), events.workload_faults.begin(),
                                 events.workload_faults.end());

    if (WIFEXITED(status) && WEXITSTATUS(status) != kExitRestart) return WEXITSTATUS(status);
    if (!state.stop.empty()) {
      std::fprintf(stderr, "kperf: the measuring process failed again after stopping (%s)\n",
                   state.stop.c_str());
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
        state.stop =
            "the device stopped accepting commands outside any configuration's device work";
    } else if (WIFSIGNALED(status) && crash_signal(WTERMSIG(status))) {
      fault = account_for_crash(events, WTERMSIG(status), state);
    } else if (WIFSIGNALED(status) &&
               (interrupted || WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
      return 130;  // interrupted before it could write anything
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) {
      return 128 + SIGPIPE;  // its reader went away (kperf ... | head)
    } else {
      state.stop = "the measuring process was killed by " + signal_text(WTERMSIG(status));
    }
    if (interrupted) {
      // Ctrl-C during a fault: write what was measured, then stop.
      state.stop = "interrupted";
    } else if (!fault.empty()) {
      state.faults_in_a_row = measured_something(events) ? 1 : state.faults_in_a_row + 1;
      const bool stopping = state.faults_in_a_row >= kFaultsInARow;
      std::fprintf(stderr, "kperf: device fault in %s; %s\n", fault.c_str(),
                   stopping ? "stopping" : "measuring on in a new process");
      if (stopping)
        state.stop =
            std::to_string(state.faults_in_a_row) + " configurations in a row faulted the device";
    }
    ++state.restarts;
  }
}

}  // namespace kperf
