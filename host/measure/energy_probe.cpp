// --energy for a measured configuration (energy_probe.hpp).
#include "energy_probe.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

#include "phases.hpp"

namespace kperf {

void EnergyProbe::measure_idle_power(std::map<std::string, double>& phases) {
  PhaseTimer timer(phases, "energy");
  EnergyMeter meter(*counter_, now_s, options_);
  auto idle = []() -> long long {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 0;
  };
  std::string problem;
  const std::vector<EnergyWindow> windows = meter.measure(idle, problem);
  std::vector<double> watts;
  for (const EnergyWindow& w : windows) watts.push_back(w.joules / w.seconds);
  std::sort(watts.begin(), watts.end());
  idle_power_w_ = watts.empty() ? 0 : watts[watts.size() / 2];
  counter_period_s_ = meter.update_period_s();
  idle_problem_ = problem;
}

void EnergyProbe::measure(const Prepared& p, double outputs, ResultRow& row,
                          std::map<std::string, double>& phases) {
  row.energy_requested = true;
  if (!counter_) {
    row.energy_problem = "no energy counter on this device (see the context)";
    return;
  }
  PhaseTimer timer(phases, "energy");
  if (auto c = counter_->clocks()) row.clocks = to_json(*c);
  if (idle_power_w_ == 0 && idle_problem_.empty()) measure_idle_power(phases);
  // Batches of about 5 ms of samples, the counter read after each: short against the counter's
  // update period (100 ms on the H200). About 50 ms of batches stay queued behind the running
  // one, so the device does not idle while the host waits on an event or reads the counter (a
  // first version that finished the queue before each read kept an H200 busy about half the
  // window). Each row's busy_fraction says how well that worked.
  const double sample_s = row.time ? std::max(1e-9, row.time->median * 1e-9) : 1e-3;
  const long long batch = std::clamp<long long>(static_cast<long long>(5e-3 / sample_s), 1, 100000);
  constexpr std::size_t kQueuedBatches = 10;
  auto& q = env_.queue();
  std::deque<cl::Event> in_flight;
  auto enqueue_batch = [&] {
    for (long long i = 0; i < batch; ++i)
      for (const LaunchSetup& l : p.launches) l.sample.enqueue(q, nullptr);
    cl::Event done;
    q.enqueueMarkerWithWaitList(nullptr, &done);
    q.flush();
    in_flight.push_back(std::move(done));
  };
  auto work = [&]() -> long long {
    while (in_flight.size() < kQueuedBatches) enqueue_batch();
    in_flight.front().wait();  // one batch done, the next one running
    in_flight.pop_front();
    enqueue_batch();
    if (interrupt_requested()) throw Abandoned{};
    return batch;
  };
  EnergyMeter meter(*counter_, now_s, options_);
  std::string problem;
  const std::vector<EnergyWindow> windows = meter.measure(work, problem);
  q.finish();
  row.energy = energy_json(windows, idle_power_w_, outputs, counter_->source(), options_.window_s,
                           row.time ? sample_s : 0);
  row.energy_problem = problem;
}

nlohmann::ordered_json EnergyProbe::json() const {
  if (!requested_) return nullptr;
  if (!counter_) return {{"source", nullptr}, {"reason", absent_reason_}};
  nlohmann::ordered_json j = {
      {"source", counter_->source()},  {"counter", counter_->describe()},
      {"idle_power_w", idle_power_w_}, {"counter_period_s", counter_period_s_},
      {"window_s", options_.window_s}, {"reps", options_.reps}};
  if (!idle_problem_.empty()) j["idle_problem"] = idle_problem_;
  return j;
}

}  // namespace kperf
