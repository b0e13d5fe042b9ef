// kperf tune --devices: the GPUs of one host that a tune spreads each stage over.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kperf {

// The devices that --devices names, as "P:D" selectors; the tune itself runs on the first. "all"
// is every device of --device's platform of the same model as --device's; otherwise a list of
// --device values. Throws UsageError for a device that does not exist, one named twice, or two
// models (a tune ranks speedups within one model).
std::vector<std::string> resolve_tune_devices(const std::string &list, const std::string &device);

// What those devices are (selector, name, UUID, PCI bus), for the fingerprint and the context.
nlohmann::ordered_json tune_devices_json(const std::vector<std::string> &selectors);

}  // namespace kperf
