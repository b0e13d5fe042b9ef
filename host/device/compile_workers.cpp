// Compiling a run's programs in worker processes (see compile_workers.hpp).
#include "compile_workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace fs = std::filesystem;

namespace kperf {

namespace {

// The descriptor on which a pooled compile worker talks to the process it compiles for.
constexpr int kWorkerFd = 3;

// Removes the scratch directory when the process that made it exits (children inherit the path
// through the environment but never own it).
struct ScratchDir {
  std::string path;
  pid_t owner = 0;
  ~ScratchDir() {
    if (!path.empty() && ::getpid() == owner) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

ScratchDir& scratch() {
  static ScratchDir dir;
  return dir;
}

void put_string(std::ofstream& out, const std::string& s) {
  const std::uint64_t n = s.size();
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

std::string get_string(std::ifstream& in) {
  std::uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), sizeof n);
  if (!in || n > (std::uint64_t{1} << 30)) throw std::runtime_error("corrupt jobs file");
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  if (!in) throw std::runtime_error("corrupt jobs file");
  return s;
}

}  // namespace

const std::string& scratch_dir() {
  ScratchDir& dir = scratch();
  if (dir.path.empty()) {
    // A supervisor's measuring process uses its supervisor's directory, which outlives it.
    if (const char* shared = std::getenv("KPERF_SCRATCH_DIR"); shared && *shared) {
      dir.path = shared;
      return dir.path;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kperf-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a directory in $TMPDIR");
    dir.path = pattern;
    dir.owner = ::getpid();
  }
  return dir.path;
}

void use_private_jit_cache() { use_persistent_jit_cache(scratch_dir() + "/nvidia-jit-cache"); }

void use_persistent_jit_cache(const std::string& dir) {
  ::setenv("CUDA_CACHE_PATH", dir.c_str(), 1);
  ::setenv("CUDA_CACHE_DISABLE", "0", 1);
  ::setenv("CUDA_CACHE_MAXSIZE", "4294967296", 1);  // the driver's largest: never evicts in a run
}

unsigned compile_worker_count() {
  if (const char* text = std::getenv("KPERF_COMPILE_WORKERS")) {
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && n >= 0) return static_cast<unsigned>(std::min(n, 64L));
  }
  return std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
}

double compile_timeout_s() {
  if (const char* text = std::getenv("KPERF_COMPILE_TIMEOUT")) {
    char* end = nullptr;
    const double s = std::strtod(text, &end);
    if (end != text && *end == '\0' && s > 0) return s;
  }
  return 300;
}

namespace {

double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// One worker of the pool: a `kperf __compile-worker --serve HEADER` process and its end of a
// socket pair, on which it takes commands ("load JOBS_FILE", "build I") and answers ("built I").
struct PoolMember {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // answer bytes short of a whole line
  long job = -1;        // the job it is building (its position in the jobs file); -1: idle
  double since = 0;     // when it was handed that job
  bool gone = false;
};

bool send_line(int fd, const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// The compile workers of this process. Started by the first compile_in_workers() with enough
// programs for them and kept until the process ends, so that later batches (every stage and
// climb round of a tune) pay no start: a worker's start is a context on the device, 1.5 s alone
// and 4.7 s for 16 at once on an H200, more than compiling a few programs.
class CompilePool {
 public:
  ~CompilePool() { stop(); }
  // At least `count` members running `exe` on `header` (the binary cache, salt and device; other
  // values restart the pool). Returns how many it started.
  std::size_t ensure(const std::string& exe, const std::vector<std::string>& header,
                     std::size_t count) {
    if (broken_) return 0;
    if (exe != exe_ || header != header_) {
      stop();
      exe_ = exe;
      header_ = header;
      header_file_ = scratch_dir() + "/compile-pool-" + std::to_string(::getpid());
      std::ofstream out(header_file_, std::ios::binary | std::ios::trunc);
      for (const std::string& field : header) put_string(out, field);
      if (!out) return 0;
    }
    std::size_t started = 0;
    while (members_.size() < count) {
      PoolMember m;
      if (!spawn(m)) break;
      members_.push_back(std::move(m));
      ++started;
    }
    return started;
  }
  std::vector<PoolMember>& members() { return members_; }
  // Ends a member (killed first where `kill`) and reaps it; returns its wait status.
  static int end(PoolMember& m, bool kill) {
    if (kill) ::kill(m.pid, SIGKILL);
    if (m.fd >= 0) ::close(m.fd);
    m.fd = -1;
    int status = 0;
    while (::waitpid(m.pid, &status, 0) < 0 && errno == EINTR) {
    }
    m.gone = true;
    return status;
  }
  void forget_gone() {
    members_.erase(std::remove_if(members_.begin(), members_.end(),
                                  [](const PoolMember& m) { return m.gone; }),
                   members_.end());
  }
  // Closing its socket ends a member (it reads the end of its commands); one that does not end
  // within a second is killed.
  void stop() {
    for (PoolMember& m : members_) {
      ::close(m.fd);
      m.fd = -1;
    }
    const double deadline = seconds_now() + 1;
    for (PoolMember& m : members_) {
      int status = 0;
      while (::waitpid(m.pid, &status, WNOHANG) == 0 && seconds_now() < deadline) ::usleep(5000);
      if (::waitpid(m.pid, &status, WNOHANG) == 0) end(m, true);
    }
    members_.clear();
    if (!header_file_.empty()) std::remove(header_file_.c_str());
    exe_.clear();
    header_.clear();
    header_file_.clear();
  }

 private:
  bool spawn(PoolMember& m) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, sv[1], kWorkerFd);  // dup2 drops FD_CLOEXEC
    std::string exe = exe_, command = "__compile-worker", serve = "--serve";
    char* argv[] = {exe.data(), command.data(), serve.data(), header_file_.data(), nullptr};
    const int rc = posix_spawn(&m.pid, exe.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(sv[1]);
    if (rc != 0) {
      ::close(sv[0]);
      return false;
    }
    m.fd = sv[0];
    return true;
  }
  std::string exe_, header_file_;
  std::vector<std::string> header_;
  std::vector<PoolMember> members_;

 public:
  // Set when a batch's every worker ended without building a program (they cannot start here):
  // this process then compiles alone rather than start more.
  bool broken_ = false;
};

CompilePool& pool() {
  static CompilePool instance;
  return instance;
}

// Hands member `m` the next job, if any is left.
bool hand_next(PoolMember& m, std::size_t& next, std::size_t jobs) {
  m.job = -1;
  if (next >= jobs) return true;
  if (!send_line(m.fd, "build " + std::to_string(next) + "\n")) return false;
  m.job = static_cast<long>(next++);
  m.since = seconds_now();
  return true;
}

// Reads what `m` answered; false when it has gone (its socket closed: it ended or died).
bool read_answers(PoolMember& m, std::size_t& next, std::size_t jobs, std::size_t& built) {
  char buffer[256];
  const ssize_t n = ::recv(m.fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  if (n <= 0) return false;
  m.pending.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t eol; (eol = m.pending.find('\n')) != std::string::npos;) {
    const std::string line = m.pending.substr(0, eol);
    m.pending.erase(0, eol + 1);
    if (line.rfind("built ", 0) != 0 || m.job < 0 || std::stol(line.substr(6)) != m.job) continue;
    ++built;
    if (!hand_next(m, next, jobs)) return false;
  }
  return true;
}

}  // namespace

WorkerCompile compile_in_workers(ClEnv& env, const std::string& worker_exe,
                                 const std::vector<std::pair<std::string, std::string>>& jobs) {
  // On a CPU device the workers would compete with the device's own threads (PoCL on 2 cores:
  // 6.1 s of compiling in-process, 9.9 s with 2 workers), so they run only when asked for there.
  const bool asked = std::getenv("KPERF_COMPILE_WORKERS") != nullptr;
  const unsigned max_workers = compile_worker_count();
  if (max_workers < 2 || worker_exe.empty() || (!asked && !env.info().is_gpu())) return {};
  if (env.binary_cache_dir().empty()) {
    const std::string dir = scratch_dir() + "/binaries";
    fs::create_directories(dir);
    env.enable_binary_cache(dir, "");
  }
  auto cached = [&](std::size_t i) {
    return fs::exists(env.binary_cache_path(jobs[i].first, jobs[i].second));
  };
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!env.has_built(jobs[i].first, jobs[i].second) && !cached(i)) todo.push_back(i);
  if (todo.empty()) return {};
  // A first start (a context on the device) costs about as much as a few builds; once the pool
  // runs, even one program goes to it, where it does not hold up the loads of this process.
  CompilePool& workers = pool();
  const std::vector<std::string> header = {env.binary_cache_dir(), env.binary_cache_salt(),
                                           std::to_string(env.info().platform_index),
                                           std::to_string(env.info().device_index)};
  const std::size_t wanted = std::min<std::size_t>(max_workers, todo.size() / 4);
  WorkerCompile result;
  result.starts = workers.ensure(worker_exe, header, wanted < 2 ? 0 : wanted);
  if (workers.members().empty()) return {};

  const std::string jobs_file = scratch_dir() + "/jobs-" + std::to_string(::getpid());
  {
    std::ofstream out(jobs_file, std::ios::binary | std::ios::trunc);
    put_string(out, std::to_string(todo.size()));
    for (std::size_t i : todo) {
      put_string(out, jobs[i].first);
      put_string(out, jobs[i].second);
    }
    if (!out) return {};
  }
  std::size_t next = 0, built = 0;
  std::set<pid_t> took_part;
  for (PoolMember& m : workers.members()) {
    if (!send_line(m.fd, "load " + jobs_file + "\n") || !hand_next(m, next, todo.size()))
      CompilePool::end(m, true);
    if (m.job >= 0) took_part.insert(m.pid);
  }
  workers.forget_gone();
  const double limit = compile_timeout_s();
  auto busy = [&] {
    return std::any_of(workers.members().begin(), workers.members().end(),
                       [](const PoolMember& m) { return !m.gone && m.job >= 0; });
  };
  while (busy()) {
    std::vector<pollfd> fds;
    for (const PoolMember& m : workers.members())
      if (!m.gone && m.job >= 0) fds.push_back({m.fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 20);
    for (PoolMember& m : workers.members()) {
      if (m.gone || m.job < 0) continue;
      const std::size_t job = todo[static_cast<std::size_t>(m.job)];
      if (!read_answers(m, next, todo.size(), built)) {
        // Ended while building: a signal is the compiler's crash on that program, which built
        // in this process would crash it too. Any other end leaves the program to this process.
        const int status = CompilePool::end(m, false);
        if (m.job >= 0 && WIFSIGNALED(status) && !cached(job)) result.crashed.push_back(job);
      } else if (m.job >= 0 && seconds_now() - m.since > limit) {
        CompilePool::end(m, true);
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", limit);
        env.fail_build(jobs[job].first, jobs[job].second,
                       std::string("the compiler did not finish this program in ") + seconds +
                           " s (KPERF_COMPILE_TIMEOUT); its compile worker was killed");
        result.timed_out.push_back(job);
      }
      if (m.job >= 0) took_part.insert(m.pid);
    }
    workers.forget_gone();
  }
  std::remove(jobs_file.c_str());
  if (workers.members().empty() && built == 0) workers.broken_ = true;
  result.processes = took_part.size();
  result.programs = todo.size();  // those no member reached are left to this process
  return result;
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--serve") return 2;
  std::ifstream header(argv[2], std::ios::binary);
  const std::string cache_dir = get_string(header), salt = get_string(header);
  const std::string platform = get_string(header), device = get_string(header);
  // Test hook (tests/process_test.py): KPERF_FAULT=hang-compile:TEXT hangs this worker where it
  // would build a program whose options contain TEXT, as a compiler that never returns does.
  const char* spec = std::getenv("KPERF_FAULT");
  const std::string hang = spec && std::string(spec).rfind("hang-compile:", 0) == 0
                               ? std::string(spec + 13)
                               : std::string();
  for (auto& entry : enumerate_devices()) {
    if (std::to_string(entry.info.platform_index) != platform ||
        std::to_string(entry.info.device_index) != device)
      continue;
    ClEnv env(std::move(entry));
    env.enable_binary_cache(cache_dir, salt);
    std::vector<std::pair<std::string, std::string>> jobs;
    std::string pending;
    char buffer[4096];
    for (;;) {
      std::size_t eol;
      while ((eol = pending.find('\n')) == std::string::npos) {
        const ssize_t n = ::read(kWorkerFd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;  // the pool closed its end
        pending.append(buffer, static_cast<std::size_t>(n));
      }
      const std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      if (line.rfind("load ", 0) == 0) {
        std::ifstream in(line.substr(5), std::ios::binary);
        jobs.assign(std::stoul(get_string(in)), {});
        for (auto& [source, options] : jobs) {
          source = get_string(in);
          options = get_string(in);
        }
      } else if (line.rfind("build ", 0) == 0) {
        const auto& [source, options] = jobs.at(std::stoul(line.substr(6)));
        if (!hang.empty() && options.find(hang) != std::string::npos)
          for (;;) ::pause();
        try {
          env.build(source, options);  // stores the binary in the cache
        } catch (const std::exception&) {
          // The parent builds it again and reports the log in the row.
        }
        env.forget(source, options);
        if (!send_line(kWorkerFd, "built " + line.substr(6) + "\n")) return 0;
      }
    }
  }
  return 3;
}

}  // namespace kperf
