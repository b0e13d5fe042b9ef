// The kernel axes' registry (see kernel_axes.hpp) and what every layer reads from it.
#include "kernel_axes.hpp"

#include <algorithm>
#include <stdexcept>

#include "strings.hpp"

namespace kperf {

namespace {

std::optional<Verdict> needs_tile(const AppDescriptor& app, const Variant& v) {
  if (uses_local_tile(app, v)) return std::nullopt;
  return Verdict{
      Status::kNotApplicable,
      "--relax skip removes the barrier after the tile fill and this kernel has no tile"};
}

}  // namespace

const std::vector<KernelAxis>& kernel_axes() {
  // clang-format off
  static const std::vector<KernelAxis> registry = {
    {"relax", "relax", "relax", false,
     "barrier relaxation: none, skip (barrier after the tile fill removed)", "none", "none,skip",
     "relaxed barrier",
     {{"none", "", true, false}, {"skip", "-DRELAX_SKIP=1", false, true}},
     nullptr, "", needs_tile, nullptr},
    {"loop-skip", "loop", "loop_skip", true,
     "window loop perforation (bilateral): 1 (every tap), 2 (every other tap, weights "
     "renormalised)", "1", "1,2", "loop perforation",
     {{"1", "", true, false}, {"2", "-DKPERF_LOOP_SKIP=2", false, false}},
     "bilateral", "loop perforation (--loop-skip) skips taps of a weighted window loop", nullptr,
     [](int index, PointArgs& args) { args.loop_skip = index + 1; }},
    {"weights", "weights", "weights", false,
     "bilateral's spatial weights: table, computed (exp() at every tap)", "table", nullptr,
     nullptr,
     {{"table", "", true, false}, {"computed", "-DBILATERAL_TABLE=0", true, false}},
     "bilateral", "--weights chooses how spatial weights are found", nullptr, nullptr},
  };
  // clang-format on
  return registry;
}

bool KernelAxis::applies_to(const AppDescriptor& app) const {
  if (!apps) return true;
  const auto names = split_list(apps);
  return std::find(names.begin(), names.end(), app.name) != names.end();
}

int KernelAxis::parse(const std::string& value) const {
  std::string valid;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (value == values[i].name) return static_cast<int>(i);
    valid += (i ? ", " : "") + std::string(values[i].name);
  }
  throw std::invalid_argument("unknown --" + std::string(flag) + " '" + value +
                              "' (valid: " + valid + ")");
}

std::size_t kernel_axis_index(const std::string& flag) {
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (flag == axes[i].flag) return i;
  throw std::invalid_argument("unknown kernel axis '" + flag + "'");
}

std::vector<std::vector<int>> parse_kernel_axis_lists(
    const std::map<std::string, std::string>& lists) {
  const auto& axes = kernel_axes();
  std::vector<std::vector<int>> out(axes.size(), std::vector<int>{0});
  for (const auto& [flag, text] : lists) {
    const std::size_t axis = kernel_axis_index(flag);
    out[axis].clear();
    for (const auto& item : split_list(text)) {
      const int index = axes[axis].parse(item);
      if (std::find(out[axis].begin(), out[axis].end(), index) == out[axis].end())
        out[axis].push_back(index);
    }
    if (out[axis].empty()) throw std::invalid_argument("--" + flag + " needs at least one value");
  }
  return out;
}

std::string kernel_axes_key(const Variant& v) {
  std::string key;
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (const int value = v.kernel_value(i))
      key += std::string("/") + axes[i].key + ":" + axes[i].values[value].name;
  return key;
}

std::string kernel_axes_build_options(const Variant& v) {
  std::string options;
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (const int value = v.kernel_value(i))
      options += std::string(" ") + axes[i].values[value].build_options;
  return options;
}

std::optional<Verdict> check_kernel_axes(const Variant& v, const AppDescriptor& app) {
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!v.kernel_value(i)) continue;
    const KernelAxis& axis = axes[i];
    if (!axis.applies_to(app))
      return Verdict{Status::kNotApplicable, std::string(axis.absent_reason) + "; " + app.name +
                                                 " has none (" + axis.apps + " has)"};
    if (axis.check)
      if (auto verdict = axis.check(app, v)) return verdict;
  }
  return std::nullopt;
}

void apply_kernel_axes(const Variant& v, PointArgs& args) {
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].model) axes[i].model(v.kernel_value(i), args);
}

const char* kernel_value_name(const Variant& v, const std::string& flag) {
  const std::size_t axis = kernel_axis_index(flag);
  return kernel_axes()[axis].values[v.kernel_value(axis)].name;
}

bool races(const Variant& v) {
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].values[v.kernel_value(i)].races) return true;
  return false;
}

bool kernel_axes_exact(const Variant& v) {
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].values[v.kernel_value(i)].exact) return false;
  return true;
}

std::vector<std::string> kernel_axes_families(const Variant& v) {
  std::vector<std::string> out;
  const auto& axes = kernel_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (v.kernel_value(i) && axes[i].family) out.push_back(axes[i].family);
  return out;
}

bool is_exact(const Variant& v) {
  return v.is_accurate() && v.output.none() && v.precision_info().exact() && kernel_axes_exact(v) &&
         v.iterations_skip == 0;
}

}  // namespace kperf
