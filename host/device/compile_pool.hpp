// The compile worker processes of one kperf process (compile_workers.hpp uses them): started once
// and kept for the whole command, each talking over its own socket.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace kperf {

// One worker: a `kperf __compile-worker --serve HEADER --fd N` process and this process's end of
// a socket pair. It says "ready" once its device context exists, then takes "load JOBS_FILE" and
// "build I" and answers "built I".
struct PoolMember {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;    // answer bytes short of a whole line
  bool ready = false;     // it said "ready"
  long job = -1;          // the job it is building (its place in the batch's jobs); -1: idle
  std::size_t batch = 0;  // the batch whose jobs file it loaded last
  double since = 0;       // when it started (not ready yet) or was handed `job`
  bool gone = false;      // ended and reaped
  int status = 0;         // its wait status once gone
};

// Length-prefixed strings: the header and jobs files (a salt holds NUL bytes).
void put_string(std::ofstream& out, const std::string& s);
std::string get_string(std::ifstream& in);  // throws std::runtime_error on a short or bad file

// A signal that says the worker crashed (a compiler fault), not that it was stopped.
bool crash_signal_status(int status);

double pool_seconds_now();

class CompilePool {
 public:
  ~CompilePool() { stop(); }
  // At least `count` members running `exe` on `header` (the binary cache directory, its salt,
  // the platform and the device; others restart the pool). Returns how many it started.
  std::size_t ensure(const std::string& exe, const std::vector<std::string>& header,
                     std::size_t count);
  std::vector<PoolMember>& members() { return members_; }
  // Sends `line`; false when the member has gone (it is then reaped).
  static bool send(PoolMember& m, const std::string& line);
  // Reads what `m` said into `lines`; false when its socket closed or it exited (it is then
  // reaped, its status kept).
  static bool read(PoolMember& m, std::vector<std::string>& lines);
  // Ends a member (killed first where `kill`) and reaps it.
  static void end(PoolMember& m, bool kill);
  void forget_gone();
  // Closes every member's socket (each then ends: it reads the end of its commands); one that has
  // not ended within a second is killed.
  void stop();
  // Set when every member ended without saying "ready" or building a program (they cannot start
  // here): this process then compiles alone rather than start more.
  bool broken = false;

 private:
  bool spawn(PoolMember& m);
  std::string exe_, header_file_;
  std::vector<std::string> header_;
  std::vector<PoolMember> members_;
};

// This process's pool (the scratch directory it writes in outlives it).
CompilePool& compile_pool();

}  // namespace kperf
