// The options several commands take (option_groups.hpp).
#include "option_groups.hpp"

namespace kperf {

namespace {

auto text_value() { return cxxopts::value<std::string>(); }
auto text_value(const char* default_text) {
  return cxxopts::value<std::string>()->default_value(default_text);
}

}  // namespace

void add_timing_options(cxxopts::Options& options, const std::string& what, const char* warmup,
                        const char* reps) {
  options.add_options("Timing")("warmup", "untimed " + what, text_value(warmup))(
      "reps", "timed " + what, text_value(reps));
}

void add_shape_options(cxxopts::Options& options, const std::string& wg_help,
                       const char* outputs_default, const std::string& vec_note,
                       const std::string& py_note) {
  auto value = [&] { return outputs_default ? text_value(outputs_default) : text_value(); };
  options.add_options("Launch shapes")("wg", wg_help, text_value())(
      "vec",
      "outputs per work-item along x, a list of 1, 2, 4, 8 (4: float4 stores; 8: 16-byte half "
      "stores)" +
          vec_note,
      value())(
      "py",
      "outputs per work-item along y, a list of 1..16 (taller blocks, same work-items)" + py_note,
      value());
}

void add_search_options(cxxopts::Options& options, const std::string& metric) {
  options.add_options("Search")("budget",
                                "error budget(s): fractions in (0, 1] of " + metric +
                                    " (0.02 = 2 %); a list tunes once and chooses per budget",
                                text_value())(
      "train", "directory of training images (all one size, or give --size)", text_value())(
      "test", "directory of held-out test images", text_value())(
      "percentile",
      "the training (and test) statistic held to the budget: this percentile over inputs",
      text_value("95"))("tie-tolerance",
                        "of a budget's finalists, timed again beside the accurate one in "
                        "interleaved rounds, those within this fraction of the fastest are a tie, "
                        "won by the lowest training error",
                        text_value("0.015"))(
      "cache",
      "the device cache in the timed stages: cold (flushed before every sample, as kperf run "
      "--cold), warm (back-to-back launches) or auto (cold on a GPU, warm on a CPU)",
      text_value("auto"));
}

void add_energy_options(cxxopts::Options& options, const std::string& where) {
  options.add_options("Energy")("energy",
                                "energy per launch beside time" + where +
                                    ": none, auto (what exists for the device), nvml, powercap "
                                    "(RAPL, CPU devices), hwmon:PATH (an energyN_input or "
                                    "powerN_input file)",
                                text_value("none"))(
      "energy-window",
      "seconds of back-to-back samples per energy window, aligned to the counter's updates",
      text_value("1"))("energy-reps", "energy windows per timed configuration", text_value("3"));
}

void add_out_option(cxxopts::Options& options, const std::string& prefix) {
  options.add_options()("out", "the document's path (default: " + prefix + "-<device>-<time>.json)",
                        text_value());
}

}  // namespace kperf
