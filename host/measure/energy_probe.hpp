// --energy for a measured configuration: windows of back-to-back samples after its timed ones,
// set against the device's idle power (measured once per run), into the row's energy fields.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "core.hpp"
#include "energy.hpp"
#include "results.hpp"

namespace kperf {

class EnergyProbe {
 public:
  // `counter`: nullptr where none exists (rows then say energy null, `absent_reason` why);
  // `requested`: --energy was given.
  EnergyProbe(ClEnv& env, EnergyCounter* counter, bool requested, EnergyOptions options,
              std::string absent_reason)
      : env_(env),
        counter_(counter),
        requested_(requested),
        options_(std::move(options)),
        absent_reason_(std::move(absent_reason)) {}
  bool requested() const { return requested_; }
  // The energy of a sample of `p`'s launches (over `outputs` outputs) into `row`; its wall time
  // into `phases` ("energy").
  void measure(const Prepared& p, double outputs, ResultRow& row,
               std::map<std::string, double>& phases);
  // The context's energy block: the source and what it reads, idle power, the counter's update
  // period, the window; null without --energy.
  nlohmann::ordered_json json() const;

 private:
  void measure_idle_power(std::map<std::string, double>& phases);
  ClEnv& env_;
  EnergyCounter* counter_;
  bool requested_;
  EnergyOptions options_;
  std::string absent_reason_;
  double idle_power_w_ = 0;
  double counter_period_s_ = 0;
  std::string idle_problem_;
};

}  // namespace kperf
