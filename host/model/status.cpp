// The statuses' names (status.hpp): the one table documents and readers share.
#include "status.hpp"

#include <stdexcept>

namespace kperf {

namespace {

struct Named {
  Status status;
  const char* name;
};

constexpr Named kNames[] = {
    {Status::kOk, "ok"},
    {Status::kPlanned, "planned"},
    {Status::kNotApplicable, "not_applicable"},
    {Status::kInvalidConfig, "invalid_config"},
    {Status::kBuildFailed, "build_failed"},
    {Status::kRunFailed, "run_failed"},
    {Status::kDeviceFault, "device_fault"},
    {Status::kHostError, "host_error"},
    {Status::kReferenceFailed, "reference_failed"},
};

}  // namespace

const char* status_name(Status s) {
  for (const Named& n : kNames)
    if (n.status == s) return n.name;
  return "unknown";
}

Status parse_status(const std::string& text) {
  for (const Named& n : kNames)
    if (text == n.name) return n.status;
  throw std::invalid_argument("unknown status '" + text + "'");
}

}  // namespace kperf
