// libFuzzer target: the command-line value parsers (lists, work-group sizes, grid sizes, scheme
// and reconstruction names, apps, outputs per work-item, device selectors). Each may only
// return a valid value or throw std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cl_env.hpp"
#include "cli.hpp"
#include "schemes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& wg : kperf::parse_wg_list(text))
      if (wg.x < 1 || wg.y < 1) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  try {
    const auto [w, h] = kperf::parse_size(text);
    if (w < 1 || h < 1) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  try {
    for (const auto& v : kperf::parse_variants(text, "nn,li"))
      if (v.skip < 1 || !v.scheme) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  try {
    kperf::parse_variants("rows1", text);
  } catch (const std::invalid_argument&) {
  }
  try {
    kperf::parse_apps(text);
  } catch (const std::invalid_argument&) {
  }
  try {
    kperf::parse_vec_list(text);
    kperf::parse_py_list(text);
  } catch (const std::invalid_argument&) {
  }
  try {
    kperf::parse_count("reps", text, 1, 1000000);
  } catch (const std::invalid_argument&) {
  }
  const auto sel = kperf::parse_device_selector(text);
  if (sel.kind == kperf::DeviceSelector::Kind::kIndex && (sel.platform < 0 || sel.device < 0))
    __builtin_trap();
  return 0;
}
