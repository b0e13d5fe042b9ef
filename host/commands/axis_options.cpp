// The approximation axes as command-line options (see axis_options.hpp).
#include "axis_options.hpp"

#include <algorithm>

#include "kernel_axes.hpp"
#include "strings.hpp"

namespace kperf {

const std::vector<AxisOption>& axis_options() {
  // clang-format off
  static const std::vector<AxisOption> table = {
    {"schemes", "input schemes: accurate, stencil, rows1, rows2, rows:K, cols:K, or all", "accurate,stencil,rows1,rows2", "accurate,stencil,rows:2,rows:3,cols:2,cols:3", &AxesSpec::schemes},
    {"recon", "input reconstructions: nn, li, or all", "nn", "nn,li", &AxesSpec::recons},
    {"load", "load paths: local (tile), global (no local memory: Paraprox's baseline), image", "local", "local,global,image", &AxesSpec::loads},
    {"output", "output schemes: none, rows:K, cols:K, center:K (Paraprox)", "none", "none,rows:2,cols:2,center:2", &AxesSpec::outputs},
    {"output-recon", "output reconstructions: nn, li, or all", "nn", "nn,li", &AxesSpec::output_recons},
    {"output-fill", "how an output scheme writes the outputs it does not compute: fused (the computing work-item, one launch), shared (one launch; a work-group computes each computed output once, through local memory), separate (a second, timed launch)", "fused", "fused,shared", &AxesSpec::output_fills},
    {"precision", "storage precision: f32, f16in (half input), f16 (half input and output)", "f32", "f32,f16in,f16", &AxesSpec::precisions},
    {"perforate", "where rows:K / cols:K perforate: device, host (the host uploads only kept lines)", "device", "device,host", &AxesSpec::perforates},
    {"iterations-skip", "hotspot launch perforation: fractions R in [0, 1) of the steps skipped", "0", nullptr, &AxesSpec::iterations_skips},
  };
  // clang-format on
  return table;
}

namespace {

void add_option(cxxopts::Options& options, bool tune, const char* flag, const char* help,
                const char* run_default, const char* tune_default) {
  const char* defaults = tune ? tune_default : run_default;
  if (!defaults) return;
  options.add_options()(flag, std::string(help) + (tune ? "; the values searched" : "; a list"),
                        cxxopts::value<std::string>()->default_value(defaults));
}

}  // namespace

void add_axis_options(cxxopts::Options& options, bool tune) {
  for (const AxisOption& a : axis_options())
    add_option(options, tune, a.flag, a.help, a.run_default, a.tune_default);
  for (const KernelAxis& a : kernel_axes())
    add_option(options, tune, a.flag, a.help, a.run_default, a.tune_default);
}

AxesSpec axes_from(const cxxopts::ParseResult& args, bool tune) {
  AxesSpec axes;
  for (const AxisOption& a : axis_options())
    if (tune ? a.tune_default : a.run_default) axes.*a.field = args[a.flag].as<std::string>();
  for (const KernelAxis& a : kernel_axes())
    if (tune ? a.tune_default : a.run_default) axes.kernel[a.flag] = args[a.flag].as<std::string>();
  // The tune's default fills are fills to try where there is an output scheme, not a request: a
  // search with none takes the run's default fill (a fill given by the user is checked as given).
  const auto outputs = split_list(axes.outputs);
  if (tune && !args.count("output-fill") &&
      std::all_of(outputs.begin(), outputs.end(), [](const std::string& o) { return o == "none"; }))
    axes.output_fills = AxesSpec().output_fills;
  return axes;
}

}  // namespace kperf
