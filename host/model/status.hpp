// Every status a measured row can have (a configuration's, a chain's), in one place: what the
// documents write as the row's "status", and what the commands count and exit on.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace kperf {

enum class Status {
  kOk,               // measured
  kPlanned,          // --dry-run: would be measured
  kNotApplicable,    // the approximation does not apply here (the reason says why)
  kInvalidConfig,    // the launch does not fit the device or the kernel
  kBuildFailed,      // a program did not build
  kRunFailed,        // it ran, and the run or its outputs failed a check
  kDeviceFault,      // it faulted the device, or the device was lost before it (faults.md)
  kHostError,        // the host failed it (memory, a file that could not be written)
  kReferenceFailed,  // the truth is non-finite on a finite input: nothing to measure against
};

// "ok", "planned", "not_applicable", "invalid_config", "build_failed", "run_failed",
// "device_fault", "host_error", "reference_failed".
const char* status_name(Status s);
// The status a document names; throws std::invalid_argument for any other text.
Status parse_status(const std::string& text);

inline std::ostream& operator<<(std::ostream& out, Status s) { return out << status_name(s); }

// nlohmann's hooks: a status is its name in JSON.
inline void to_json(nlohmann::json& j, Status s) { j = status_name(s); }
inline void to_json(nlohmann::ordered_json& j, Status s) { j = status_name(s); }
inline void from_json(const nlohmann::json& j, Status& s) {
  s = parse_status(j.get<std::string>());
}
inline void from_json(const nlohmann::ordered_json& j, Status& s) {
  s = parse_status(j.get<std::string>());
}

// Why a configuration or chain cannot run as asked, judged before or after building.
struct Verdict {
  Status status;
  std::string reason;
};

}  // namespace kperf
