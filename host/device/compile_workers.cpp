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

#include "compile_pool.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace kperf {

namespace {

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

// GPUs with at least this much memory keep the pool's contexts between batches (16 of them beside
// the measured kernels); smaller ones end them after each batch. CPU devices keep them.
constexpr std::uint64_t kPoolKeptFromBytes = std::uint64_t{32} << 30;

// Whether the binary cache holds this program (a worker stored it).
bool in_binary_cache(const ClEnv& env, const std::pair<std::string, std::string>& job) {
  return fs::exists(env.binary_cache_path(job.first, job.second));
}

// One batch of programs over the pool's members, each handed one program at a time: a member
// gets the batch's jobs file with its first program of the batch, so a member that gets none never
// reads it.
class Batch {
 public:
  Batch(ClEnv& env, const std::vector<std::pair<std::string, std::string>>& jobs,
        const std::vector<std::size_t>& todo, std::string jobs_file, std::size_t id)
      : env_(env), jobs_(jobs), todo_(todo), jobs_file_(std::move(jobs_file)), id_(id) {}

  // Runs until every program is built or no member is left to build the rest.
  void run(CompilePool& pool, WorkerCompile& result) {
    for (PoolMember& m : pool.members()) {
      if (m.ready) hand(m);
      if (m.job >= 0) took_part_.insert(m.pid);
    }
    const double limit = compile_timeout_s(), start_limit = std::max(60.0, limit);
    auto waiting = [&](const PoolMember& m) {
      return !m.gone && (m.job >= 0 || (!m.ready && next_ < todo_.size()));
    };
    while (std::any_of(pool.members().begin(), pool.members().end(), waiting)) {
      std::vector<pollfd> fds;
      for (const PoolMember& m : pool.members())
        if (waiting(m)) fds.push_back({m.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 20);
      for (PoolMember& m : pool.members()) {
        if (!waiting(m)) continue;
        std::vector<std::string> lines;
        const bool alive = CompilePool::read(m, lines);
        for (const std::string& line : lines) answer(m, line);
        if (!alive || m.gone) {
          gone(m, result);
        } else if (!m.ready && pool_seconds_now() - m.since > start_limit) {
          CompilePool::end(m, true);  // a start that never ended charges no program
        } else if (m.job >= 0 && pool_seconds_now() - m.since > limit) {
          timed_out(m, limit, result);
        }
        if (m.job >= 0) took_part_.insert(m.pid);
      }
      pool.forget_gone();
    }
  }
  std::size_t built() const { return built_; }
  std::size_t took_part() const { return took_part_.size(); }

 private:
  bool cached(std::size_t job) const { return in_binary_cache(env_, jobs_[job]); }
  void hand(PoolMember& m) {
    m.job = -1;
    if (next_ >= todo_.size()) return;
    std::string message;
    if (m.batch != id_) message = "load " + jobs_file_ + "\n";
    message += "build " + std::to_string(next_) + "\n";
    if (!CompilePool::send(m, message)) return;
    m.batch = id_;
    m.job = static_cast<long>(next_++);
    m.since = pool_seconds_now();
  }
  void answer(PoolMember& m, const std::string& line) {
    if (line == "ready") {
      m.ready = true;
      hand(m);
      return;
    }
    if (line.rfind("built ", 0) != 0) return;
    char* end = nullptr;
    const long job = std::strtol(line.c_str() + 6, &end, 10);
    if (end == line.c_str() + 6 || *end != '\0' || job != m.job) return;
    ++built_;
    hand(m);
  }
  // Ended: a crash signal while building is the compiler's crash on that program, which built in
  // this process would crash it too. Any other end leaves the program to this process.
  void gone(PoolMember& m, WorkerCompile& result) {
    if (!m.gone) CompilePool::end(m, false);
    if (m.job < 0) return;
    const std::size_t job = todo_[static_cast<std::size_t>(m.job)];
    if (crash_signal_status(m.status) && !cached(job)) result.crashed.push_back(job);
    m.job = -1;
  }
  void timed_out(PoolMember& m, double limit, WorkerCompile& result) {
    const std::size_t job = todo_[static_cast<std::size_t>(m.job)];
    CompilePool::end(m, true);
    m.job = -1;
    if (cached(job)) return;  // stored, then stuck: the program is there all the same
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", limit);
    env_.fail_build(jobs_[job].first, jobs_[job].second,
                    std::string("the compiler did not finish this program in ") + seconds +
                        " s (KPERF_COMPILE_TIMEOUT); its compile worker was killed");
    result.timed_out.push_back(job);
  }

  ClEnv& env_;
  const std::vector<std::pair<std::string, std::string>>& jobs_;
  const std::vector<std::size_t>& todo_;
  std::string jobs_file_;
  std::size_t id_, next_ = 0, built_ = 0;
  std::set<pid_t> took_part_;
};

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
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!env.has_built(jobs[i].first, jobs[i].second) && !in_binary_cache(env, jobs[i]))
      todo.push_back(i);
  if (todo.empty()) return {};
  // A first start (a context on the device) costs about as much as a few builds; once the pool
  // runs, even one program goes to it, where it does not hold up the loads of this process.
  CompilePool& pool = compile_pool();
  const std::vector<std::string> header = {env.binary_cache_dir(), env.binary_cache_salt(),
                                           std::to_string(env.info().platform_index),
                                           std::to_string(env.info().device_index)};
  const std::size_t wanted = std::min<std::size_t>(max_workers, todo.size() / 4);
  WorkerCompile result;
  result.starts = pool.ensure(worker_exe, header, wanted < 2 ? 0 : wanted);
  if (pool.members().empty()) return {};

  static std::size_t batches = 0;
  const std::size_t id = ++batches;
  const std::string jobs_file =
      scratch_dir() + "/jobs-" + std::to_string(::getpid()) + "-" + std::to_string(id);
  {
    std::ofstream out(jobs_file, std::ios::binary | std::ios::trunc);
    put_string(out, std::to_string(todo.size()));
    for (std::size_t i : todo) {
      put_string(out, jobs[i].first);
      put_string(out, jobs[i].second);
    }
    if (!out) return {};
  }
  Batch batch(env, jobs, todo, jobs_file, id);
  batch.run(pool, result);
  std::remove(jobs_file.c_str());  // every member that read it has answered or ended
  if (pool.members().empty() && batch.built() == 0) pool.broken = true;
  // The members' contexts hold device memory while the run measures; on a device without room
  // to spare they end with each batch (and start again with the next, as before the pool).
  if (env.info().is_gpu() && env.info().global_mem_size < kPoolKeptFromBytes) pool.stop();
  result.processes = batch.took_part();
  result.batches = 1;
  result.programs = todo.size();  // those no member reached are left to this process
  return result;
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 5 || std::string(argv[1]) != "--serve" || std::string(argv[3]) != "--fd") return 2;
  const int fd = std::atoi(argv[4]);
  if (fd < 3 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return 2;  // nothing it starts inherits it
  // The pool ends it (its socket closes, or the parent's death): a Ctrl-C to the process group is
  // the parent's to handle.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
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
    auto say = [&](const std::string& line) {
      return ::send(fd, line.data(), line.size(), MSG_NOSIGNAL) ==
             static_cast<ssize_t>(line.size());
    };
    if (!say("ready\n")) return 0;
    std::vector<std::pair<std::string, std::string>> jobs;
    std::string pending;
    char buffer[4096];
    for (;;) {
      std::size_t eol;
      while ((eol = pending.find('\n')) == std::string::npos) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
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
        if (!say("built " + line.substr(6) + "\n")) return 0;
      }
    }
  }
  return 3;
}

}  // namespace kperf
