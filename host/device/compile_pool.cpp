// The compile worker processes of one kperf process (see compile_pool.hpp).
#include "compile_pool.hpp"

#include <fcntl.h>
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
#include <stdexcept>

#include "compile_workers.hpp"

extern char** environ;

namespace kperf {

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

bool crash_signal_status(int status) {
  if (!WIFSIGNALED(status)) return false;
  switch (WTERMSIG(status)) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;  // SIGKILL, SIGINT, SIGTERM: stopped, not crashed
  }
}

double pool_seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::size_t CompilePool::ensure(const std::string& exe, const std::vector<std::string>& header,
                                std::size_t count) {
  if (broken) return 0;
  if (exe != exe_ || header != header_) {
    stop();
    const std::string file = scratch_dir() + "/compile-pool-" + std::to_string(::getpid());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    for (const std::string& field : header) put_string(out, field);
    if (!out) return 0;
    exe_ = exe;
    header_ = header;
    header_file_ = file;
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

bool CompilePool::spawn(PoolMember& m) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
  // This end stays here and in no other child; the worker's end is inherited by this one child
  // alone (spawned before it is closed here), under its own number: no descriptor the worker
  // inherits on purpose (a tune stage's slot lock) is replaced.
  ::fcntl(sv[0], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string exe = exe_, command = "__compile-worker", serve = "--serve", fd_flag = "--fd",
              fd = std::to_string(sv[1]);
  char* argv[] = {exe.data(),     command.data(), serve.data(), header_file_.data(),
                  fd_flag.data(), fd.data(),      nullptr};
  const int rc = posix_spawn(&m.pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return false;
  }
  m.fd = sv[0];
  m.since = pool_seconds_now();
  return true;
}

bool CompilePool::send(PoolMember& m, const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(m.fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      end(m, true);
      return false;
    }
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool CompilePool::read(PoolMember& m, std::vector<std::string>& lines) {
  char buffer[256];
  for (;;) {
    const ssize_t n = ::recv(m.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      end(m, false);
      return false;
    }
    m.pending.append(buffer, static_cast<std::size_t>(n));
  }
  for (std::size_t eol; (eol = m.pending.find('\n')) != std::string::npos;) {
    lines.push_back(m.pending.substr(0, eol));
    m.pending.erase(0, eol + 1);
  }
  // A worker that exited while something it started still holds its socket open.
  if (::waitpid(m.pid, &m.status, WNOHANG) == m.pid) {
    ::close(m.fd);
    m.fd = -1;
    m.gone = true;
    return false;
  }
  return true;
}

void CompilePool::end(PoolMember& m, bool kill) {
  if (m.gone) return;
  if (kill) ::kill(m.pid, SIGKILL);
  if (m.fd >= 0) ::close(m.fd);
  m.fd = -1;
  while (::waitpid(m.pid, &m.status, 0) < 0 && errno == EINTR) {
  }
  m.gone = true;
}

void CompilePool::forget_gone() {
  members_.erase(
      std::remove_if(members_.begin(), members_.end(), [](const PoolMember& m) { return m.gone; }),
      members_.end());
}

void CompilePool::stop() {
  for (PoolMember& m : members_) {
    ::close(m.fd);
    m.fd = -1;
  }
  const double deadline = pool_seconds_now() + 1;
  for (PoolMember& m : members_) {
    while (::waitpid(m.pid, &m.status, WNOHANG) == 0 && pool_seconds_now() < deadline)
      ::usleep(5000);
    if (::waitpid(m.pid, &m.status, WNOHANG) == 0) end(m, true);
  }
  members_.clear();
  if (!header_file_.empty()) std::remove(header_file_.c_str());
  exe_.clear();
  header_.clear();
  header_file_.clear();
}

CompilePool& compile_pool() {
  scratch_dir();  // made first, so removed after the pool has ended its members
  static CompilePool pool;
  return pool;
}

}  // namespace kperf
