// Kernel axes: approximation and implementation choices whose whole effect is how the kernel is
// built (a -D option), which apps and configurations they apply to, and (for some) how the CPU
// model computes a point. The command line, result keys and fields, build options, verdicts, the
// CPU model, the runner and the tuner all read them from this registry, so a new axis of this
// kind is one descriptor in kernel_axes.cpp plus its kernel code.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps.hpp"
#include "schemes.hpp"

namespace kperf {

struct KernelAxisValue {
  const char* name;           // "skip": the command-line value and the key segment's suffix
  const char* build_options;  // "-DRELAX_SKIP=1"; "" for the default
  bool exact;                 // outputs as the accurate kernel's (the tuner's exact family)
  bool races;  // outputs may differ launch to launch: rows keep several downloads' errors
};

struct KernelAxis {
  const char* flag;    // the command-line option ("relax" for --relax)
  const char* key;     // key segment prefix: "relax" gives "relax:skip"
  const char* field;   // result-row field
  bool numeric_field;  // the field is a JSON number ("loop_skip": 2), else a string
  const char* help;
  const char* run_default;   // what kperf run measures unless told
  const char* tune_default;  // what kperf tune searches unless told; nullptr: not searched
  const char* family;        // the tuner's family for non-default values; nullptr: none
  std::vector<KernelAxisValue> values;  // values[0] is the default: no key segment, no option
  // The apps that have what this axis varies, comma-separated; nullptr: every app. Rows of the
  // others omit the field and their non-default values are not_applicable.
  const char* apps;
  const char* absent_reason;  // why it does not apply to the others
  // A reason a non-default value cannot run in this configuration (nullptr: none).
  std::optional<Verdict> (*check)(const AppDescriptor& app, const Variant& v);
  // Sets the CPU model's point arguments for value `index` (nullptr: no value changes outputs).
  void (*model)(int index, PointArgs& args);

  bool applies_to(const AppDescriptor& app) const;
  // Value index of a command-line value; throws std::invalid_argument naming the valid ones.
  int parse(const std::string& value) const;
};

const std::vector<KernelAxis>& kernel_axes();
// Registry position of the axis with this flag; throws std::invalid_argument.
std::size_t kernel_axis_index(const std::string& flag);

// The value indices of every kernel axis as listed on the command line (flag -> comma list; an
// absent flag: the default alone). Throws std::invalid_argument for an unknown flag or value.
std::vector<std::vector<int>> parse_kernel_axis_lists(
    const std::map<std::string, std::string>& lists);

// The kernel axes' share of a configuration: key segments, -D options, a verdict, the model's
// point arguments and the row fields.
std::string kernel_axes_key(const Variant& v);
std::string kernel_axes_build_options(const Variant& v);
std::optional<Verdict> check_kernel_axes(const Variant& v, const AppDescriptor& app);
void apply_kernel_axes(const Variant& v, PointArgs& args);
// The name of the variant's value of the axis with this flag ("skip").
const char* kernel_value_name(const Variant& v, const std::string& flag);
// Whether some value of the variant races (several downloads' errors are kept).
bool races(const Variant& v);
// Whether every kernel-axis value of the variant keeps the accurate outputs.
bool kernel_axes_exact(const Variant& v);
// No approximation at all: every element loaded and computed, f32 storage, barriers kept (the
// load path may differ: it changes no value).
bool is_exact(const Variant& v);
// The tuner's families of the variant's non-default kernel-axis values.
std::vector<std::string> kernel_axes_families(const Variant& v);

}  // namespace kperf
