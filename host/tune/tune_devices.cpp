// kperf tune --devices: the stage workers (see tune_devices.hpp).
#include "tune_devices.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cl_env.hpp"
#include "compile_workers.hpp"
#include "exit_codes.hpp"
#include "gzip.hpp"
#include "kernel_root.hpp"
#include "strings.hpp"

extern char **environ;

namespace kperf {

namespace {

// Blocks until no process holds the lock file at `path` (flock, across processes), taking it when
// `keep`; returns its descriptor, or -1 when it cannot be opened (then nothing is waited for).
int lock_file(const std::string &path, bool keep) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | (keep ? 0 : O_CLOEXEC), 0600);
  if (fd < 0) return -1;
  while (::flock(fd, LOCK_EX) < 0 && errno == EINTR) {
  }
  if (!keep) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Waits for `pid` until `deadline`, polling (waitpid has no time limit): false when it still runs
// then. A pid that cannot be waited for (already reaped) counts as ended.
bool wait_until(pid_t pid, int &status, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// $KPERF_STAGE_TIMEOUT where it is a number above 0.
std::optional<double> stage_timeout_from_environment() {
  const char *text = std::getenv("KPERF_STAGE_TIMEOUT");
  if (!text) return std::nullopt;
  char *end = nullptr;
  const double s = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(s > 0)) return std::nullopt;
  return s;
}

// The limit in words, for the rows of a killed worker: where it came from.
std::string limit_words(double limit_s) {
  std::ostringstream out;
  out << limit_s << " s"
      << (stage_timeout_from_environment() ? " (KPERF_STAGE_TIMEOUT)"
                                           : " (10 min and 1 min per configuration of its share; "
                                             "KPERF_STAGE_TIMEOUT sets another)");
  return out.str();
}

}  // namespace

double stage_timeout_s(std::size_t configurations) {
  return stage_timeout_from_environment().value_or(600 + 60 * static_cast<double>(configurations));
}

void hold_stage_slot() {
  const char *path = std::getenv("KPERF_STAGE_LOCK");
  if (!path || !*path) return;
  // Not close-on-exec: the processes this worker starts (its measuring process, compile workers)
  // hold the slot with it. The variable goes, so that they do not wait for it themselves.
  lock_file(path, true);
  ::unsetenv("KPERF_STAGE_LOCK");
}

StageWorker::StageWorker(nlohmann::ordered_json request, int slot, const std::string &selector,
                         std::size_t inputs)
    : slot_(slot), selector_(selector) {
  std::size_t configurations = 0;
  for (const auto &unit : request.value("units", nlohmann::ordered_json::array()))
    configurations += unit.value("shapes", nlohmann::ordered_json::array()).size() * inputs;
  limit_s_ = stage_timeout_s(configurations);
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(limit_s_));
  // A worker that an earlier measuring process of this tune started for this slot holds its lock
  // until it and its children are gone (they end with that process: process.hpp); its files are
  // rewritten, and a new worker started, only after.
  const std::string lock = scratch_dir() + "/stage-" + std::to_string(slot) + ".lock";
  lock_file(lock, false);
  const std::string base = scratch_dir() + "/stage-" + std::to_string(slot) + "-" +
                           request.value("stage", std::string("stage"));
  request_path_ = base + ".request.json";
  rows_path_ = base + ".rows.json";
  std::remove(rows_path_.c_str());
  request["device"] = selector;
  request["rows"] = rows_path_;
  request_ = request;
  {
    std::ofstream out(request_path_, std::ios::trunc);
    out << request.dump();
    if (!out) {
      spawn_error_ = "cannot write " + request_path_;
      return;
    }
  }
  // Its stdout (the progress of nothing) is dropped; its stderr (warnings, errors) is the user's.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::string exe = executable_path().string(), command = "__tune-stage";
  char *argv[] = {exe.data(), command.data(), request_path_.data(), nullptr};
  std::vector<std::string> env_strings = {"KPERF_STAGE_LOCK=" + lock};
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "KPERF_STAGE_LOCK=", 17) != 0) env_strings.push_back(*e);
  std::vector<char *> envp;
  for (auto &e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    spawn_error_ = "cannot start a worker for device " + selector + ": " + std::strerror(rc);
  }
}

StageWorker::~StageWorker() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  // A hung worker does not answer SIGTERM: it has ten seconds, then SIGKILL.
  if (wait_until(pid_, status, std::chrono::steady_clock::now() + std::chrono::seconds(10))) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

StageWorker::Result StageWorker::finish(bool stop) {
  Result result;
  const std::string who = "the tune's worker on device " + selector_ + " (--devices position " +
                          std::to_string(slot_) + ")";
  int status = 0;
  bool killed = false;
  if (pid_ > 0) {
    if (stop) ::kill(pid_, SIGTERM);
    killed = !wait_until(pid_, status, deadline_);
    if (killed) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }
  try {
    const nlohmann::json doc = nlohmann::json::parse(read_document(rows_path_));
    for (const auto &j : doc.at("rows")) result.rows.push_back(row_from_json(j));
    result.copy_gbps = doc.value("copy_gbps", 0.0);
    result.phases = doc.value("phases", nlohmann::json::object());
  } catch (const std::exception &) {
    // No rows yet (it failed before its first checkpoint): the status says why.
  }
  if (!spawn_error_.empty()) {
    result.problem = spawn_error_;
  } else if (killed) {
    result.lost = who + " did not finish its share of stage " +
                  request_.value("stage", std::string("?")) + " within " + limit_words(limit_s_) +
                  " and was killed";
    result.interrupted = stop;
  } else if ((WIFEXITED(status) && WEXITSTATUS(status) == kExitInterrupted) ||
             (stop && WIFSIGNALED(status))) {
    result.interrupted = true;
  } else if (WIFSIGNALED(status)) {
    result.problem = who + " was killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.problem = who + " exited with status " + std::to_string(WEXITSTATUS(status)) +
                     " (its message is above)";
  }
  std::remove(request_path_.c_str());
  std::remove(rows_path_.c_str());
  return result;
}

void injected_stage_hang(const std::string &stage) {
  const char *spec = std::getenv("KPERF_FAULT");
  if (!spec || std::string(spec) != "hang-stage:" + stage) return;
  for (;;) ::pause();  // a signal's handler returns here; only SIGKILL ends it
}

void write_stage_rows(const std::string &path, const std::vector<ResultRow> &rows, double copy_gbps,
                      const nlohmann::ordered_json &phases) {
  nlohmann::ordered_json doc;
  doc["rows"] = nlohmann::ordered_json::array();
  for (const auto &r : rows) doc["rows"].push_back(to_json(r));
  doc["copy_gbps"] = copy_gbps;
  doc["phases"] = phases;
  write_document_atomic(path, doc.dump());
}

}  // namespace kperf
