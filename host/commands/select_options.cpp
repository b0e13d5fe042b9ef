// --select and the canary's options (SPEC 15), their context block and the selections table.
#include "select_options.hpp"

#include <cmath>
#include <cstdio>

#include "cli.hpp"
#include "command_support.hpp"
#include "strings.hpp"

namespace kperf {

void add_select_options(cxxopts::Options& options, const char* what) {
  const std::string select =
      std::string("how each held-out input gets its ") + what +
      ": static (the tune's choice) and/or canary (per input, the fastest rung of a ladder of the "
      "front whose canary bounds its error within the budget; SPEC 15), a list";
  // clang-format off
  options.add_options()
    ("select", select, cxxopts::value<std::string>()->default_value("static"))
    ("ladder", std::string("--select canary: ") + what + "s of the front per ladder besides the accurate one", cxxopts::value<std::string>()->default_value("4"))
    ("canary-fraction", "--select canary: the share of the outputs a canary compares", cxxopts::value<std::string>()->default_value("0.001"))
    ("canary-tiles", "--select canary: the fewest tiles a canary samples (every tile of a smaller launch)", cxxopts::value<std::string>()->default_value("128"))
    ("canary-confidence", "--select canary: the confidence of the canary's one-sided upper bound", cxxopts::value<std::string>()->default_value("0.95"))
    ("canary-calibrate", "--select canary (kperf tune): on scales each app's margins by a split-conformal quantile of its canaries' misses on the training inputs, off keeps the canary's own", cxxopts::value<std::string>()->default_value("on"))
    ("canary-on", "--select canary: where the canaries run: auto (the device on a GPU that can run them, else the host), device (wherever the device canary can; the host for rungs it cannot take) or host (CPU models)", cxxopts::value<std::string>()->default_value("auto"));
  // clang-format on
}

SelectOptions read_select_options(const cxxopts::ParseResult& args) {
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  SelectOptions s;
  for (const auto& method : split_list(text("select"))) {
    if (method != "static" && method != "canary")
      throw UsageError("--select " + method + ": expected static or canary (a list is allowed)");
    s.canary = s.canary || method == "canary";
  }
  s.ladder = static_cast<std::size_t>(parse_count("ladder", text("ladder"), 0, 64));
  const std::string fraction = text("canary-fraction");
  s.settings.fraction = fraction == "1" ? 1.0 : parse_fraction("canary-fraction", fraction);
  s.settings.confidence = parse_fraction("canary-confidence", text("canary-confidence"));
  s.settings.min_tiles = parse_count("canary-tiles", text("canary-tiles"), 2, 1 << 20);
  s.calibrate = text("canary-calibrate") == "on";
  if (!s.calibrate && text("canary-calibrate") != "off")
    throw UsageError("--canary-calibrate " + text("canary-calibrate") + ": expected on or off");
  s.canary_on = text("canary-on");
  if (s.canary_on != "auto" && s.canary_on != "device" && s.canary_on != "host")
    throw UsageError("--canary-on " + s.canary_on + ": expected auto, device or host");
  return s;
}

namespace {

double number(const nlohmann::ordered_json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

const char* verdict(const nlohmann::ordered_json& j) {
  return !j.contains("holds") || j["holds"].is_null() ? "unmeasured"
         : j["holds"].get<bool>()                     ? "yes"
                                                      : "NO";
}

}  // namespace

void print_selections_header(const char* first_column) {
  std::printf("\n%-14s %7s  %-12s %9s  %-12s %9s %9s %9s %6s\n", first_column, "budget",
              "static holds", "speedup", "canary holds", "test p", "net", "kernel", "cov");
}

void print_selection(const std::string& name, const nlohmann::ordered_json& choice,
                     const nlohmann::ordered_json& select, const nlohmann::ordered_json& tracking) {
  std::printf("%-14s %6.2f%%  %-12s %8.2fx  %-12s %8.3f%% %8.2fx %8.2fx %5.0f%%\n", name.c_str(),
              100 * choice["budget"].get<double>(), verdict(choice),
              number(select, "speedup_static"), verdict(select),
              100 * number(select, "percentile_error"), number(select, "speedup_net"),
              number(select, "speedup_kernel"), 100 * number(tracking, "coverage"));
}

}  // namespace kperf
