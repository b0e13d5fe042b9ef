// The structural axes: load path, output scheme, storage precision, perforation site and launch
// perforation. Each is a descriptor, as the kernel axes are (kernel_axes.hpp), that the result
// key, the variant's family, the row's fields, their JSON and the context's axis defaults read;
// the command line reads the option table of axis_options.cpp. The input scheme and its
// reconstruction lead the key and are not among them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results.hpp"
#include "schemes.hpp"

namespace kperf {

// One row field of a structural axis: a text member of ResultRow, or a number.
struct AxisField {
  const char* name;                        // the JSON field
  std::string ResultRow::*text;            // the row member for a text field, else nullptr
  double ResultRow::*number;               // the row member for a numeric field, else nullptr
  const char* default_text;                // what an absent text field reads as ("" : stays absent)
  std::string (*text_of)(const Variant&);  // a variant's value ("" : the field is absent)
  double (*number_of)(const Variant&);
};

struct StructuralAxis {
  const char* name;
  std::vector<AxisField> fields;
  // The key segment of a variant ("load:global", "out:rows:2/nn/fused", "f16in", "host",
  // "iskip:0.5"); "" at the default, where version-1 keys have none.
  std::string (*key_segment)(const Variant&);
  // The approximation family of a variant's value; "" at the default, for a value that changes no
  // output (a load path) and for the perforation site (it is the input scheme's).
  std::string (*family)(const Variant&);
  // The -D options selecting the value in the kernel sources ("-DKPERF_LOAD_FILE=load_global.cl");
  // "" at the default, so version-1 configurations build exactly as before.
  std::string (*build_options)(const Variant&);
  // The values the command line lists (AxesSpec), each as what it sets on a variant; parse_variants
  // crosses them in registry order. Throws std::invalid_argument for a bad value.
  std::vector<std::function<void(Variant&)>> (*choices)(const AxesSpec& axes);
  // Why the variant's value cannot run for this app (a not_applicable row), or nothing.
  std::optional<Verdict> (*verdict)(const Variant& v, const AppDescriptor& app);
};

// In key order.
const std::vector<StructuralAxis>& structural_axes();

// The row's fields of every structural axis, for a variant.
void set_structural_fields(const Variant& v, ResultRow& row);

}  // namespace kperf
