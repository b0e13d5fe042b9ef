// Energy beside time: counters of the energy a device used (NVIDIA's NVML, Linux RAPL powercap,
// a hwmon sensor), and the windows of back-to-back launches that measure a configuration's joules
// per launch against a counter that updates far more slowly than a kernel runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"

namespace kperf {

// SM and memory clocks and the reasons the clocks are held down, where the counter knows them.
struct ClockState {
  unsigned sm_mhz = 0, mem_mhz = 0;
  std::uint64_t reasons = 0;  // NVML's clocks-event (throttle) reason bits
  // Thermal or power throttling (software or hardware power cap, thermal slowdown, power brake).
  bool throttled() const;
  std::string reason_names() const;  // e.g. "sw_power_cap,hw_thermal"; "" when none
};
nlohmann::ordered_json to_json(const ClockState& c);

class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  virtual std::string source() const = 0;  // "nvml", "powercap", "hwmon"
  // The cumulative energy in joules; nullopt when the read failed.
  virtual std::optional<double> read_joules() = 0;
  // What it reads (device mapping, domains, sensor path), for the context.
  virtual nlohmann::ordered_json describe() const = 0;
  virtual std::optional<ClockState> clocks() { return std::nullopt; }
};

// The counter --energy asks for on this device. "none" gives nullptr; "auto" what exists (nullptr
// and the reason in `why_none` when nothing does); an explicit source that does not exist throws
// std::invalid_argument saying what is missing (exit 2, before anything runs).
std::unique_ptr<EnergyCounter> open_energy_counter(const std::string& spec, const ClEnv& env,
                                                   std::string& why_none);
// Throws std::invalid_argument unless spec is none, auto, nvml, powercap or hwmon:PATH.
void check_energy_spec(const std::string& spec);

// One window: energy and duration between two observed counter updates, and the launches run.
struct EnergyWindow {
  double joules = 0, seconds = 0;
  long long launches = 0;
  std::optional<ClockState> clocks;
};

struct EnergyOptions {
  double window_s = 1.0;  // --energy-window: the least duration of a window
  int reps = 3;           // --energy-reps: windows per configuration
  int max_attempts = 10;  // windows tried before giving up on a counter that keeps misbehaving
};

// Measures windows on a counter. `now` is the time in seconds (steady); the function passed to
// a measurement runs work (a batch of launches, finished, or an idle pause) and returns how many
// launches it ran. Windows start and end on observed counter updates, so that their energy and
// duration cover the same span; one where the counter went backwards (reset or wrap) is
// discarded and another taken.
class EnergyMeter {
 public:
  EnergyMeter(EnergyCounter& counter, std::function<double()> now, EnergyOptions options);
  // `options.reps` valid windows (fewer, with the reason in `problem`, when the counter keeps
  // failing).
  std::vector<EnergyWindow> measure(const std::function<long long()>& work, std::string& problem);
  // The median interval between counter updates seen so far (0 before two were seen).
  double update_period_s() const;

 private:
  std::optional<EnergyWindow> one_window(const std::function<long long()>& work,
                                         std::string& problem);
  EnergyCounter& counter_;
  std::function<double()> now_;
  EnergyOptions options_;
  std::vector<double> update_intervals_;
};

// A row's energy object from its windows: joules per launch (median and spread over windows),
// average power, dynamic joules per launch above `idle_w`, nJ per output element, and with the
// launch's median kernel time `sample_s` the fraction of each window the device was busy.
nlohmann::ordered_json energy_json(const std::vector<EnergyWindow>& windows, double idle_w,
                                   double outputs_per_launch, const std::string& source,
                                   double window_s, double sample_s = 0);

}  // namespace kperf
