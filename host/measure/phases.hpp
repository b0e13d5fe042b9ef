// The harness's own clock: where a command's wall time goes, phase by phase (the documents'
// harness block).
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace kperf {

// Seconds on a steady clock.
inline double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Adds the wall time of its scope to one phase of the harness breakdown.
class PhaseTimer {
 public:
  PhaseTimer(std::map<std::string, double>& phases, const char* name)
      : phases_(phases), name_(name), start_(now_s()) {}
  ~PhaseTimer() { phases_[name_] += now_s() - start_; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  std::map<std::string, double>& phases_;
  const char* name_;
  double start_;
};

// Wall seconds of a command's phases, each from the end of the one before: a harness block.
class PhaseLaps {
 public:
  void end(const char* name) {
    const double t = now_s();
    laps_[name] = t - last_;
    last_ = t;
  }
  double wall_s() const { return now_s() - start_; }
  const std::map<std::string, double>& laps() const { return laps_; }

 private:
  double start_ = now_s(), last_ = start_;
  std::map<std::string, double> laps_;
};

}  // namespace kperf
