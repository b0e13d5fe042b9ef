// Compiling a run's programs in worker processes (see compile_workers.hpp).
#include "compile_workers.hpp"

#include <fcntl.h>
#include <spawn.h>
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
#include <stdexcept>
#include <thread>

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

// Where worker `index` appends the number of each job it starts (its position in the jobs file),
// so that the parent knows what a worker that crashed or hung was building.
std::string progress_path(const std::string& jobs_file, const std::string& index) {
  return jobs_file + ".at" + index;
}

// The last job a worker started, or npos before its first.
std::size_t last_started(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::size_t at = std::string::npos;
  while (std::getline(in, line))
    if (!line.empty()) at = std::strtoul(line.c_str(), nullptr, 10);
  return at;
}

struct Worker {
  pid_t pid = 0;
  std::string progress;
  std::size_t at = std::string::npos;  // the job it is building (position in the jobs file)
  double since = 0;                    // when it started that job (or itself)
  int status = 0;
  bool running = true, killed = false;
};

double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Reaps the workers, killing one that spends more than `limit` seconds on one job (or on its
// start). A waitpid without a limit would wait for a hung compiler for ever.
void wait_for(std::vector<Worker>& workers, double limit) {
  std::size_t running = workers.size();
  while (running > 0) {
    for (Worker& w : workers) {
      if (!w.running) continue;
      const pid_t done = ::waitpid(w.pid, &w.status, WNOHANG);
      if (done < 0 && errno == EINTR) continue;
      if (done == 0) {
        const std::size_t at = last_started(w.progress);
        if (at != w.at) {
          w.at = at;
          w.since = seconds_now();
        }
        if (seconds_now() - w.since <= limit) continue;
        ::kill(w.pid, SIGKILL);
        w.killed = true;
        while (::waitpid(w.pid, &w.status, 0) < 0 && errno == EINTR) {
        }
      }
      w.at = last_started(w.progress);  // what it was building when it ended
      w.running = false;
      --running;
    }
    if (running > 0) ::usleep(20000);
  }
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
  // A worker's start (a context on the device) costs about as much as a few builds.
  const unsigned count = static_cast<unsigned>(std::min<std::size_t>(max_workers, todo.size() / 4));
  if (count < 2) return {};

  std::string exe = worker_exe;
  const std::string jobs_file = scratch_dir() + "/jobs-" + std::to_string(::getpid());
  {
    std::ofstream out(jobs_file, std::ios::binary | std::ios::trunc);
    put_string(out, env.binary_cache_dir());
    put_string(out, env.binary_cache_salt());
    put_string(out, std::to_string(env.info().platform_index));
    put_string(out, std::to_string(env.info().device_index));
    put_string(out, std::to_string(todo.size()));
    for (std::size_t i : todo) {
      put_string(out, jobs[i].first);
      put_string(out, jobs[i].second);
    }
    if (!out) return {};
  }
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<Worker> workers;
  for (unsigned w = 0; w < count; ++w) {
    std::string index = std::to_string(w), total = std::to_string(count);
    std::string command = "__compile-worker";
    char* argv[] = {exe.data(),   command.data(), const_cast<char*>(jobs_file.c_str()),
                    index.data(), total.data(),   nullptr};
    Worker worker;
    worker.progress = progress_path(jobs_file, index);
    worker.since = seconds_now();
    if (posix_spawn(&worker.pid, exe.c_str(), &quiet, nullptr, argv, environ) == 0)
      workers.push_back(worker);
  }
  posix_spawn_file_actions_destroy(&quiet);
  const double limit = compile_timeout_s();
  wait_for(workers, limit);
  std::remove(jobs_file.c_str());
  if (workers.empty()) return {};
  WorkerCompile result{workers.size(), todo.size(), {}, {}};
  for (const Worker& w : workers) {
    std::remove(w.progress.c_str());
    if (w.at == std::string::npos || w.at >= todo.size()) continue;
    const std::size_t job = todo[w.at];
    if (w.killed) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", limit);
      env.fail_build(jobs[job].first, jobs[job].second,
                     std::string("the compiler did not finish this program in ") + seconds +
                         " s (KPERF_COMPILE_TIMEOUT); its compile worker was killed");
      result.timed_out.push_back(job);
    } else if (WIFSIGNALED(w.status) && !cached(job)) {
      result.crashed.push_back(job);
    }
  }
  return result;
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 4) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  const std::string cache_dir = get_string(in), salt = get_string(in);
  const int platform = std::stoi(get_string(in)), device = std::stoi(get_string(in));
  const std::size_t count = std::stoul(get_string(in));
  const std::size_t index = std::stoul(argv[2]), workers = std::stoul(argv[3]);
  struct Job {
    std::size_t at;
    std::string source, options;
  };
  std::vector<Job> mine;
  for (std::size_t i = 0; i < count; ++i) {
    std::string source = get_string(in), options = get_string(in);
    if (i % workers == index) mine.push_back({i, std::move(source), std::move(options)});
  }
  const int progress = ::open(progress_path(argv[1], argv[2]).c_str(),
                              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  // Test hook (tests/process_test.py): KPERF_FAULT=hang-compile:TEXT hangs this worker where it
  // would build a program whose options contain TEXT, as a compiler that never returns does.
  const char* spec = std::getenv("KPERF_FAULT");
  const std::string hang = spec && std::string(spec).rfind("hang-compile:", 0) == 0
                               ? std::string(spec + 13)
                               : std::string();
  for (auto& entry : enumerate_devices()) {
    if (entry.info.platform_index != platform || entry.info.device_index != device) continue;
    ClEnv env(std::move(entry));
    env.enable_binary_cache(cache_dir, salt);
    for (const Job& job : mine) {
      const std::string line = std::to_string(job.at) + "\n";
      if (progress >= 0 && ::write(progress, line.data(), line.size()) < 0) {
        // Without it a crash here is charged to no program; the parent then builds them all.
      }
      if (!hang.empty() && job.options.find(hang) != std::string::npos)
        for (;;) ::pause();
      try {
        env.build(job.source, job.options);  // stores the binary in the cache
      } catch (const std::exception&) {
        // The parent builds it again and reports the log in the row.
      }
    }
    return 0;
  }
  return 3;
}

}  // namespace kperf
