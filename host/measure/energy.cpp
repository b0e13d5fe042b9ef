// Energy counters (NVML loaded at run time, RAPL powercap, hwmon) and the windowed measurement of
// joules per launch (energy.hpp).
#include "energy.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "stats.hpp"

namespace fs = std::filesystem;

namespace kperf {

namespace {

// NVML's clocks-event reason bits that mean power or thermal throttling.
constexpr std::uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                        kHwPowerBrake = 0x80;
constexpr std::uint64_t kThrottleBits =
    kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  return text;
}

std::optional<double> read_number(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str()) return std::nullopt;
  return v;
}

// ---- NVML, loaded with dlopen: no build dependency, absent on most machines.

struct NvmlPciInfo {  // nvmlPciInfo_t (v3)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

class NvmlCounter : public EnergyCounter {
 public:
  static std::unique_ptr<NvmlCounter> open(const ClEnv& env, std::string& problem);
  ~NvmlCounter() override {
    if (shutdown_) shutdown_();
    if (lib_) ::dlclose(lib_);
  }
  std::string source() const override { return "nvml"; }
  std::optional<double> read_joules() override {
    unsigned long long mj = 0;
    if (energy_(device_, &mj) != 0) return std::nullopt;
    return static_cast<double>(mj) * 1e-3;
  }
  nlohmann::ordered_json describe() const override {
    return {{"library", "libnvidia-ml.so.1"}, {"pci_bus_id", bus_id_}, {"matched_by", matched_by_}};
  }
  std::optional<ClockState> clocks() override {
    ClockState c;
    if (clock_(device_, 1, &c.sm_mhz) != 0 || clock_(device_, 2, &c.mem_mhz) != 0)
      return std::nullopt;
    unsigned long long reasons = 0;
    if (reasons_ && reasons_(device_, &reasons) == 0) c.reasons = reasons;
    return c;
  }

 private:
  using Device = void*;
  void* lib_ = nullptr;
  int (*shutdown_)() = nullptr;
  int (*energy_)(Device, unsigned long long*) = nullptr;
  int (*clock_)(Device, int, unsigned*) = nullptr;
  int (*reasons_)(Device, unsigned long long*) = nullptr;
  Device device_ = nullptr;
  std::string bus_id_, matched_by_;
};

std::unique_ptr<NvmlCounter> NvmlCounter::open(const ClEnv& env, std::string& problem) {
  if (env.info().vendor.find("NVIDIA") == std::string::npos) {
    problem = "--energy nvml needs an NVIDIA device; " + env.info().name + " is not one";
    return nullptr;
  }
  const auto pci = pci_domain_and_bus(env.device());
  if (!pci) {
    problem =
        "the OpenCL driver does not give the device's PCI bus (cl_khr_pci_bus_info or "
        "cl_nv_device_attribute_query), so its NVML device cannot be matched";
    return nullptr;
  }
  auto c = std::make_unique<NvmlCounter>();
  c->lib_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!c->lib_) {
    problem = "NVML is not installed (libnvidia-ml.so.1 cannot be loaded)";
    return nullptr;
  }
  auto symbol = [&](const char* name) { return ::dlsym(c->lib_, name); };
  auto init = reinterpret_cast<int (*)()>(symbol("nvmlInit_v2"));
  auto count = reinterpret_cast<int (*)(unsigned*)>(symbol("nvmlDeviceGetCount_v2"));
  auto by_index =
      reinterpret_cast<int (*)(unsigned, Device*)>(symbol("nvmlDeviceGetHandleByIndex_v2"));
  auto pci_info =
      reinterpret_cast<int (*)(Device, NvmlPciInfo*)>(symbol("nvmlDeviceGetPciInfo_v3"));
  c->shutdown_ = reinterpret_cast<int (*)()>(symbol("nvmlShutdown"));
  c->energy_ = reinterpret_cast<int (*)(Device, unsigned long long*)>(
      symbol("nvmlDeviceGetTotalEnergyConsumption"));
  c->clock_ = reinterpret_cast<int (*)(Device, int, unsigned*)>(symbol("nvmlDeviceGetClockInfo"));
  void* reasons = symbol("nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = symbol("nvmlDeviceGetCurrentClocksThrottleReasons");
  c->reasons_ = reinterpret_cast<int (*)(Device, unsigned long long*)>(reasons);
  if (!init || !count || !by_index || !pci_info || !c->shutdown_ || !c->energy_ || !c->clock_) {
    problem = "libnvidia-ml.so.1 lacks the energy or PCI functions kperf needs";
    return nullptr;
  }
  if (init() != 0) {
    c->shutdown_ = nullptr;
    problem = "nvmlInit failed (no NVIDIA driver loaded?)";
    return nullptr;
  }
  // By UUID where OpenCL gives one (cl_khr_device_uuid; NVML spells it GPU-8-4-4-4-12): two
  // GPUs of one VM may share a PCI domain and bus. Else by that bus, when it is unambiguous.
  const std::string& uuid = env.info().uuid;
  auto by_uuid =
      reinterpret_cast<int (*)(const char*, Device*)>(symbol("nvmlDeviceGetHandleByUUID"));
  if (uuid.size() == 32 && by_uuid) {
    const std::string text = "GPU-" + uuid.substr(0, 8) + "-" + uuid.substr(8, 4) + "-" +
                             uuid.substr(12, 4) + "-" + uuid.substr(16, 4) + "-" + uuid.substr(20);
    Device d = nullptr;
    NvmlPciInfo info{};
    if (by_uuid(text.c_str(), &d) == 0 && pci_info(d, &info) == 0) {
      c->device_ = d;
      c->bus_id_ = info.bus_id;
      c->matched_by_ = "UUID " + text;
    }
  }
  unsigned n = 0;
  if (!c->device_ && count(&n) != 0) n = 0;
  int matches = 0;
  for (unsigned i = 0; i < n; ++i) {
    Device d = nullptr;
    NvmlPciInfo info{};
    if (by_index(i, &d) != 0 || pci_info(d, &info) != 0) continue;
    if (info.bus == pci->second && (pci->first == 0 || info.domain == pci->first)) {
      if (matches++ == 0) {
        c->device_ = d;
        c->bus_id_ = info.bus_id;
        c->matched_by_ = "PCI domain and bus of the OpenCL device";
      }
    }
  }
  if (matches > 1) {
    problem = std::to_string(matches) + " NVML devices share the OpenCL device's PCI bus " +
              std::to_string(pci->second) + " and it has no UUID to tell them apart";
    return nullptr;
  }
  if (!c->device_) {
    problem =
        "no NVML device has the OpenCL device's UUID or PCI bus " + std::to_string(pci->second);
    return nullptr;
  }
  unsigned long long mj = 0;
  if (c->energy_(c->device_, &mj) != 0) {
    problem = "the GPU has no total energy counter (nvmlDeviceGetTotalEnergyConsumption)";
    return nullptr;
  }
  return c;
}

// ---- Linux RAPL through /sys/class/powercap: package and DRAM domains, in microjoules.

class PowercapCounter : public EnergyCounter {
 public:
  explicit PowercapCounter(std::vector<fs::path> domains) : domains_(std::move(domains)) {
    for (const auto& d : domains_) {
      range_.push_back(read_number(d / "max_energy_range_uj").value_or(0) * 1e-6);
      last_.push_back(read_number(d / "energy_uj").value_or(0) * 1e-6);
      total_.push_back(0);
    }
  }
  std::string source() const override { return "powercap"; }
  // Each domain's counter wraps at its max_energy_range_uj: a step back within one read interval
  // is a wrap and is unwrapped here; the window logic never sees the raw counter go back.
  std::optional<double> read_joules() override {
    double sum = 0;
    for (std::size_t i = 0; i < domains_.size(); ++i) {
      const auto uj = read_number(domains_[i] / "energy_uj");
      if (!uj) return std::nullopt;
      const double j = *uj * 1e-6;
      double step = j - last_[i];
      if (step < 0 && range_[i] > 0) step += range_[i];
      total_[i] += step;
      last_[i] = j;
      sum += total_[i];
    }
    return sum;
  }
  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const auto& d : domains_)
      names.push_back(d.string() + " (" + read_text(d / "name").value_or("?") + ")");
    return {{"domains", names}};
  }

 private:
  std::vector<fs::path> domains_;
  std::vector<double> range_, last_, total_;
};

std::unique_ptr<PowercapCounter> open_powercap(std::string& problem) {
  std::vector<fs::path> domains;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/powercap", ec)) {
    const std::string name = read_text(e.path() / "name").value_or("");
    if ((name.rfind("package", 0) == 0 || name == "dram") && read_number(e.path() / "energy_uj"))
      domains.push_back(e.path());
  }
  if (domains.empty()) {
    problem = "no readable RAPL package or DRAM domain under /sys/class/powercap";
    return nullptr;
  }
  std::sort(domains.begin(), domains.end());
  return std::make_unique<PowercapCounter>(std::move(domains));
}

// ---- A hwmon sensor: energyN_input (microjoules) as is, powerN_input (microwatts) integrated.

class HwmonCounter : public EnergyCounter {
 public:
  HwmonCounter(fs::path path, bool is_power) : path_(std::move(path)), is_power_(is_power) {}
  std::string source() const override { return "hwmon"; }
  std::optional<double> read_joules() override {
    const auto v = read_number(path_);
    if (!v) return std::nullopt;
    if (!is_power_) return *v * 1e-6;
    // Trapezoids between reads: the meter reads at every batch of launches.
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    const double watts = *v * 1e-6;
    if (last_t_ > 0) integrated_ += 0.5 * (watts + last_w_) * (t - last_t_);
    last_t_ = t;
    last_w_ = watts;
    return integrated_;
  }
  nlohmann::ordered_json describe() const override {
    return {{"sensor", path_.string()}, {"kind", is_power_ ? "power, integrated" : "energy"}};
  }

 private:
  fs::path path_;
  bool is_power_;
  double last_t_ = 0, last_w_ = 0, integrated_ = 0;
};

std::unique_ptr<HwmonCounter> open_hwmon(const std::string& path, std::string& problem) {
  const std::string file = fs::path(path).filename().string();
  const bool energy = file.rfind("energy", 0) == 0, power = file.rfind("power", 0) == 0;
  if (!energy && !power) {
    problem = "not an energyN_input or powerN_input sensor file";
    return nullptr;
  }
  if (!read_number(path)) {
    problem = "the sensor cannot be read";
    return nullptr;
  }
  return std::make_unique<HwmonCounter>(path, power);
}

}  // namespace

bool ClockState::throttled() const { return (reasons & kThrottleBits) != 0; }

std::string ClockState::reason_names() const {
  static const std::pair<std::uint64_t, const char*> names[] = {{0x1, "gpu_idle"},
                                                                {0x2, "applications_clocks"},
                                                                {kSwPowerCap, "sw_power_cap"},
                                                                {kHwSlowdown, "hw_slowdown"},
                                                                {0x10, "sync_boost"},
                                                                {kSwThermal, "sw_thermal"},
                                                                {kHwThermal, "hw_thermal"},
                                                                {kHwPowerBrake, "hw_power_brake"},
                                                                {0x100, "display_clocks"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (reasons & bit) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

nlohmann::ordered_json to_json(const ClockState& c) {
  return {{"sm_mhz", c.sm_mhz},
          {"mem_mhz", c.mem_mhz},
          {"reasons", c.reason_names()},
          {"throttled", c.throttled()}};
}

void check_energy_spec(const std::string& spec) {
  if (spec == "none" || spec == "auto" || spec == "nvml" || spec == "powercap") return;
  if (spec.rfind("hwmon:", 0) == 0 && spec.size() > 6) return;
  throw std::invalid_argument("unknown --energy '" + spec +
                              "' (valid: none, auto, nvml, powercap, hwmon:PATH)");
}

std::unique_ptr<EnergyCounter> open_energy_counter(const std::string& spec, const ClEnv& env,
                                                   std::string& why_none) {
  check_energy_spec(spec);
  std::string problem;
  if (spec == "none") {
    why_none = "--energy none";
    return nullptr;
  }
  if (spec == "nvml" || spec == "powercap" || spec.rfind("hwmon:", 0) == 0) {
    std::unique_ptr<EnergyCounter> c;
    if (spec == "nvml") c = NvmlCounter::open(env, problem);
    if (spec == "powercap") {
      if (!env.info().is_cpu())
        problem = "--energy powercap measures the CPU package; " + env.info().name +
                  " is not a CPU device";
      else
        c = open_powercap(problem);
    }
    if (spec.rfind("hwmon:", 0) == 0) c = open_hwmon(spec.substr(6), problem);
    if (!c) throw std::invalid_argument("--energy " + spec + ": " + problem);
    return c;
  }
  // auto: what exists for this device.
  std::unique_ptr<EnergyCounter> c;
  if (env.info().vendor.find("NVIDIA") != std::string::npos)
    c = NvmlCounter::open(env, problem);
  else if (env.info().is_cpu())
    c = open_powercap(problem);
  else
    problem = "no energy counter is known for " + env.info().name + " (try --energy hwmon:PATH)";
  if (!c) why_none = "--energy auto: " + problem;
  return c;
}

EnergyMeter::EnergyMeter(EnergyCounter& counter, std::function<double()> now, EnergyOptions options)
    : counter_(counter), now_(std::move(now)), options_(options) {}

double EnergyMeter::update_period_s() const {
  if (update_intervals_.empty()) return 0;
  std::vector<double> v = update_intervals_;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::optional<EnergyWindow> EnergyMeter::one_window(const std::function<long long()>& work,
                                                    std::string& problem) {
  // Work until the counter changes, so the window starts on an update.
  auto read = [&]() -> std::optional<double> {
    const auto j = counter_.read_joules();
    if (!j) problem = "the " + counter_.source() + " counter could not be read";
    return j;
  };
  auto e = read();
  if (!e) return std::nullopt;
  // A counter that has not moved in 10 windows is stuck: give up rather than spin.
  const double give_up = 10 * options_.window_s + now_();
  double start_e = *e, start_t = 0;
  for (;;) {
    work();
    const auto e2 = read();
    if (!e2) return std::nullopt;
    if (*e2 < start_e) return std::nullopt;  // went back: this window is not valid
    if (*e2 != start_e) {
      start_e = *e2;
      start_t = now_();
      break;
    }
    if (now_() > give_up) {
      problem = "the " + counter_.source() + " counter did not change";
      return std::nullopt;
    }
  }
  EnergyWindow w;
  double last_e = start_e, last_change_t = start_t;
  for (;;) {
    w.launches += work();
    const auto e2 = read();
    if (!e2) return std::nullopt;
    const double t = now_();
    if (*e2 < last_e) {
      problem = "the " + counter_.source() + " counter went backwards (reset or wrap)";
      return std::nullopt;
    }
    if (*e2 != last_e) {
      update_intervals_.push_back(t - last_change_t);
      last_change_t = t;
      last_e = *e2;
      if (t - start_t >= options_.window_s) {
        w.joules = *e2 - start_e;
        w.seconds = t - start_t;
        w.clocks = counter_.clocks();
        return w;
      }
    }
    if (t > give_up + options_.window_s) {
      problem = "the " + counter_.source() + " counter stopped changing";
      return std::nullopt;
    }
  }
}

std::vector<EnergyWindow> EnergyMeter::measure(const std::function<long long()>& work,
                                               std::string& problem) {
  std::vector<EnergyWindow> windows;
  for (int attempt = 0;
       attempt < options_.max_attempts && static_cast<int>(windows.size()) < options_.reps;
       ++attempt) {
    std::string why;
    if (auto w = one_window(work, why))
      windows.push_back(*w);
    else
      problem = why;
  }
  if (static_cast<int>(windows.size()) == options_.reps) problem.clear();
  return windows;
}

nlohmann::ordered_json energy_json(const std::vector<EnergyWindow>& windows, double idle_w,
                                   double outputs_per_launch, const std::string& source,
                                   double window_s, double sample_s) {
  std::vector<double> per_launch, power, dynamic, busy;
  nlohmann::ordered_json raw = nlohmann::ordered_json::array();
  bool throttled = false;
  for (const EnergyWindow& w : windows) {
    if (w.launches <= 0 || w.seconds <= 0) continue;
    per_launch.push_back(w.joules / static_cast<double>(w.launches));
    power.push_back(w.joules / w.seconds);
    dynamic.push_back((w.joules - idle_w * w.seconds) / static_cast<double>(w.launches));
    busy.push_back(sample_s * static_cast<double>(w.launches) / w.seconds);
    nlohmann::ordered_json j = {
        {"joules", w.joules}, {"seconds", w.seconds}, {"launches", w.launches}};
    if (w.clocks) {
      j["clocks"] = to_json(*w.clocks);
      throttled = throttled || w.clocks->throttled();
    }
    raw.push_back(std::move(j));
  }
  if (per_launch.empty()) return nullptr;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const double j = median(per_launch);
  const auto [lo, hi] = std::minmax_element(per_launch.begin(), per_launch.end());
  return {{"source", source},
          {"j_per_launch", j},
          {"j_per_launch_min", *lo},
          {"j_per_launch_max", *hi},
          {"avg_power_w", median(power)},
          {"idle_power_w", idle_w},
          {"dynamic_j_per_launch", median(dynamic)},
          {"nj_per_output", outputs_per_launch > 0 ? j / outputs_per_launch * 1e9 : 0.0},
          {"window_s", window_s},
          {"busy_fraction",
           sample_s > 0 ? nlohmann::ordered_json(median(busy)) : nlohmann::ordered_json()},
          {"throttled", throttled},
          {"windows", std::move(raw)}};
}

}  // namespace kperf
