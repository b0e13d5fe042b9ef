// The approximation axes as command-line options (see axis_options.hpp).
#include "axis_options.hpp"

namespace kperf {

const std::vector<AxisOption>& axis_options() {
  // clang-format off
  static const std::vector<AxisOption> table = {
    {"schemes", "input schemes: accurate, stencil, rows1, rows2, rows:K, cols:K, or all", "accurate,stencil,rows1,rows2", "accurate,stencil,rows:2,rows:3,cols:2,cols:3", &AxesSpec::schemes},
    {"recon", "input reconstructions: nn, li, or all", "nn", "nn,li", &AxesSpec::recons},
    {"load", "load paths: local (tile), global (no local memory: Paraprox's baseline), image", "local", "local,global,image", &AxesSpec::loads},
    {"output", "output schemes: none, rows:K, cols:K, center:K (Paraprox)", "none", "none,rows:2,cols:2,center:2", &AxesSpec::outputs},
    {"output-recon", "output reconstructions: nn, li, or all", "nn", "nn,li", &AxesSpec::output_recons},
    {"precision", "storage precision: f32, f16in (half input), f16 (half input and output)", "f32", "f32,f16in,f16", &AxesSpec::precisions},
    {"perforate", "where rows:K / cols:K perforate: device, host (the host uploads only kept lines)", "device", "device,host", &AxesSpec::perforates},
    {"relax", "barrier relaxation: none, skip (barrier after the tile fill removed)", "none", "none,skip", &AxesSpec::relaxes},
    {"iterations-skip", "hotspot launch perforation: fractions R in [0, 1) of the steps skipped", "0", nullptr, &AxesSpec::iterations_skips},
    {"loop-skip", "window loop perforation (bilateral): 1 (every tap), 2 (every other tap, weights renormalised)", "1", nullptr, &AxesSpec::loop_skips},
    {"weights", "bilateral's spatial weights: table, computed (exp() at every tap)", "table", nullptr, &AxesSpec::weights},
  };
  // clang-format on
  return table;
}

void add_axis_options(cxxopts::Options& options, bool tune) {
  for (const AxisOption& a : axis_options()) {
    const char* defaults = tune ? a.tune_default : a.run_default;
    if (!defaults) continue;
    options.add_options()(a.flag,
                          std::string(a.help) + (tune ? "; the values searched" : "; a list"),
                          cxxopts::value<std::string>()->default_value(defaults));
  }
}

AxesSpec axes_from(const cxxopts::ParseResult& args, bool tune) {
  AxesSpec axes;
  for (const AxisOption& a : axis_options())
    if (tune ? a.tune_default : a.run_default) axes.*a.field = args[a.flag].as<std::string>();
  return axes;
}

}  // namespace kperf
