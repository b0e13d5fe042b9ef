// Compiling a run's programs in worker processes (see compile_workers.hpp).
#include "compile_workers.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
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
    if (!env.has_built(jobs[i].first, jobs[i].second) &&
        !fs::exists(env.binary_cache_path(jobs[i].first, jobs[i].second)))
      todo.push_back(i);
  // A worker's start (a context on the device) costs about as much as a few builds.
  const unsigned workers =
      static_cast<unsigned>(std::min<std::size_t>(max_workers, todo.size() / 4));
  if (workers < 2) return {};

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
  std::vector<pid_t> children;
  for (unsigned w = 0; w < workers; ++w) {
    std::string index = std::to_string(w), count = std::to_string(workers);
    std::string command = "__compile-worker";
    char* argv[] = {exe.data(),   command.data(), const_cast<char*>(jobs_file.c_str()),
                    index.data(), count.data(),   nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, exe.c_str(), &quiet, nullptr, argv, environ) == 0)
      children.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&quiet);
  for (pid_t pid : children) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::remove(jobs_file.c_str());
  if (children.empty()) return {};
  return {children.size(), todo.size()};
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 4) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  const std::string cache_dir = get_string(in), salt = get_string(in);
  const int platform = std::stoi(get_string(in)), device = std::stoi(get_string(in));
  const std::size_t count = std::stoul(get_string(in));
  const std::size_t index = std::stoul(argv[2]), workers = std::stoul(argv[3]);
  std::vector<std::pair<std::string, std::string>> mine;
  for (std::size_t i = 0; i < count; ++i) {
    std::string source = get_string(in), options = get_string(in);
    if (i % workers == index) mine.emplace_back(std::move(source), std::move(options));
  }
  for (auto& entry : enumerate_devices()) {
    if (entry.info.platform_index != platform || entry.info.device_index != device) continue;
    ClEnv env(std::move(entry));
    env.enable_binary_cache(cache_dir, salt);
    for (const auto& [source, options] : mine) {
      try {
        env.build(source, options);  // stores the binary in the cache
      } catch (const std::exception&) {
        // The parent builds it again and reports the log in the row.
      }
    }
    return 0;
  }
  return 3;
}

}  // namespace kperf
