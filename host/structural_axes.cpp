// The structural axes' descriptors.
#include "structural_axes.hpp"

#include <cstdio>

namespace kperf {

namespace {

std::string load_name(const Variant& v) { return v.load_path().name; }
std::string output_name(const Variant& v) { return v.output.canonical(); }
std::string output_recon_name(const Variant& v) { return recon_name(v.output_recon); }
std::string output_fill_name(const Variant& v) { return v.output.none() ? "" : v.fill().name; }
std::string precision_name(const Variant& v) { return v.precision_info().name; }
std::string perforate_name(const Variant& v) { return v.host_perforate ? "host" : "device"; }
double iterations_skip_of(const Variant& v) { return v.iterations_skip; }

}  // namespace

const std::vector<StructuralAxis>& structural_axes() {
  static const std::vector<StructuralAxis> axes = {
      {"load",
       {{"load", &ResultRow::load, nullptr, "local", load_name, nullptr}},
       [](const Variant& v) {
         return load_name(v) == "local" ? std::string() : "load:" + load_name(v);
       },
       [](const Variant&) { return std::string(); },
       [](const Variant& v) {
         return load_name(v) == "local" ? std::string()
                                        : std::string("-DKPERF_LOAD_FILE=") + v.load_path().cl_file;
       }},
      {"output",
       {{"output", &ResultRow::output, nullptr, "none", output_name, nullptr},
        {"output_recon", &ResultRow::output_recon, nullptr, "none", output_recon_name, nullptr},
        // Absent without an output scheme; rows from before the axis were filled separately.
        {"output_fill", &ResultRow::output_fill, nullptr, "", output_fill_name, nullptr}},
       [](const Variant& v) {
         return v.output.none() ? std::string()
                                : "out:" + output_name(v) + "/" + output_recon_name(v) + "/" +
                                      output_fill_name(v);
       },
       [](const Variant& v) {
         return v.output.none() ? std::string() : std::string("output approximation");
       },
       [](const Variant& v) {
         if (v.output.none()) return std::string();
         return std::string("-DKPERF_OUTPUT_FILE=") + v.output.desc->cl_file +
                " -DOUT_KY=" + std::to_string(v.output.ky()) +
                " -DOUT_KX=" + std::to_string(v.output.kx()) +
                " -DOUT_LI=" + (v.output_recon == Recon::kLi ? "1" : "0") +
                " -DKPERF_OUTPUT_FILL_FILE=" + v.fill().cl_file +
                " -DOUT_FUSED=" + (v.fill().launches == 1 ? "1" : "0");
       }},
      {"precision",
       {{"precision", &ResultRow::precision, nullptr, "f32", precision_name, nullptr}},
       [](const Variant& v) {
         return precision_name(v) == "f32" ? std::string() : precision_name(v);
       },
       [](const Variant& v) {
         return v.precision_info().exact() ? std::string() : std::string("mixed precision");
       },
       [](const Variant& v) {
         return precision_name(v) == "f32"
                    ? std::string()
                    : std::string("-DKPERF_PRECISION_FILE=") + v.precision_info().cl_file;
       }},
      {"perforate",
       {{"perforate", &ResultRow::perforate, nullptr, "device", perforate_name, nullptr}},
       [](const Variant& v) { return v.host_perforate ? std::string("host") : std::string(); },
       [](const Variant&) { return std::string(); },
       [](const Variant& v) {
         if (!v.host_perforate) return std::string();
         return std::string("-DKPERF_PERFORATE_FILE=perforate_host.cl -DKPERF_PACKED_ROWS=") +
                (std::string(v.scheme->family) == "rows" ? "1" : "0");
       }},
      {"iterations_skip",
       {{"iterations_skip", nullptr, &ResultRow::iterations_skip, nullptr, nullptr,
         iterations_skip_of}},
       [](const Variant& v) {
         if (v.iterations_skip <= 0) return std::string();
         char buf[32];
         std::snprintf(buf, sizeof buf, "iskip:%g", v.iterations_skip);
         return std::string(buf);
       },
       [](const Variant& v) {
         return v.iterations_skip > 0 ? std::string("launch perforation") : std::string();
       },
       // The host launches fewer steps; the kernel is the same.
       [](const Variant&) { return std::string(); }},
  };
  return axes;
}

void set_structural_fields(const Variant& v, ResultRow& row) {
  for (const StructuralAxis& axis : structural_axes())
    for (const AxisField& field : axis.fields) {
      if (field.text) row.*field.text = field.text_of(v);
      if (field.number) row.*field.number = field.number_of(v);
    }
}

}  // namespace kperf
