// kperf tune --devices: which devices a list names (see tune_device_list.hpp).
#include "tune_device_list.hpp"

#include <algorithm>
#include <set>

#include "cl_env.hpp"
#include "command_support.hpp"
#include "strings.hpp"

namespace kperf {

namespace {

std::string selector_of(const DeviceInfo &info) {
  return std::to_string(info.platform_index) + ":" + std::to_string(info.device_index);
}

std::size_t chosen(const std::vector<DeviceInfo> &infos, const std::string &option,
                   const std::string &text) {
  try {
    return choose_device(infos, parse_device_selector(text));
  } catch (const DeviceError &e) {
    throw UsageError(option + " " + text + ": " + e.what());
  }
}

}  // namespace

std::vector<std::string> resolve_tune_devices(const std::string &list, const std::string &device) {
  std::vector<DeviceInfo> infos;
  for (const auto &entry : enumerate_devices()) infos.push_back(entry.info);
  std::vector<std::size_t> picked;
  if (list == "all") {
    const DeviceInfo &first = infos[chosen(infos, "--device", device)];
    for (std::size_t i = 0; i < infos.size(); ++i)
      if (infos[i].platform_index == first.platform_index && infos[i].name == first.name)
        picked.push_back(i);
  } else {
    const std::vector<std::string> items = split_list(list);
    if (items.empty() || std::count(items.begin(), items.end(), std::string()) > 0)
      throw UsageError("--devices " + list +
                       ": expected all or a list of --device values (1:0,1:1)");
    std::set<std::size_t> seen;
    for (const auto &item : items) {
      const std::size_t i = chosen(infos, "--devices", item);
      if (!seen.insert(i).second)
        throw UsageError("--devices names device " + selector_of(infos[i]) + " (" + infos[i].name +
                         ") twice");
      picked.push_back(i);
    }
  }
  std::vector<std::string> selectors;
  for (std::size_t i : picked) {
    if (infos[i].name != infos[picked[0]].name)
      throw UsageError("--devices: " + selector_of(infos[picked[0]]) + " is " +
                       infos[picked[0]].name + " but " + selector_of(infos[i]) + " is " +
                       infos[i].name + " (a tune compares speedups within one model)");
    selectors.push_back(selector_of(infos[i]));
  }
  return selectors;
}

nlohmann::ordered_json tune_devices_json(const std::vector<std::string> &selectors) {
  std::vector<DeviceInfo> infos;
  for (const auto &entry : enumerate_devices()) infos.push_back(entry.info);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t slot = 0; slot < selectors.size(); ++slot) {
    const DeviceInfo &info = infos[choose_device(infos, parse_device_selector(selectors[slot]))];
    nlohmann::ordered_json d = {{"slot", slot}, {"device", selectors[slot]}, {"name", info.name}};
    if (!info.uuid.empty()) d["uuid"] = info.uuid;
    if (!info.pci_bus_id.empty()) d["pci_bus_id"] = info.pci_bus_id;
    list.push_back(d);
  }
  return list;
}

}  // namespace kperf
