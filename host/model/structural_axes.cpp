// The structural axes' descriptors.
#include "structural_axes.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "strings.hpp"

namespace kperf {

namespace {

std::string load_name(const Variant& v) { return v.load_path().name; }
std::string output_name(const Variant& v) { return v.output.canonical(); }
std::string output_recon_name(const Variant& v) { return recon_name(v.output_recon); }
std::string output_fill_name(const Variant& v) { return v.output.none() ? "" : v.fill().name; }
std::string precision_name(const Variant& v) { return v.precision_info().name; }
std::string perforate_name(const Variant& v) { return v.host_perforate ? "host" : "device"; }
double iterations_skip_of(const Variant& v) { return v.iterations_skip; }

using Choices = std::vector<std::function<void(Variant&)>>;

std::optional<Verdict> not_applicable(std::string reason) {
  return Verdict{Status::kNotApplicable, std::move(reason)};
}

std::optional<Verdict> load_verdict(const Variant& v, const AppDescriptor& app) {
  if (!v.load_path().reads_image) return std::nullopt;
  if (app.traits.iterated)
    return not_applicable(std::string(app.name) +
                          " iterates on its output buffer and an OpenCL 1.2 kernel cannot write "
                          "the image it reads");
  if (v.precision_info().in->image_channel_type == 0)
    return not_applicable(std::string("no OpenCL image channel type holds ") +
                          v.precision_info().in->name + " (the image load path)");
  return std::nullopt;
}

std::optional<Verdict> precision_verdict(const Variant& v, const AppDescriptor& app) {
  if (app.traits.iterated && v.precision_info().in != v.precision_info().out)
    return not_applicable(std::string(app.name) + "'s output is the next step's input: " +
                          v.precision_info().name + " would store them at different precisions");
  return std::nullopt;
}

std::optional<Verdict> perforate_verdict(const Variant& v, const AppDescriptor& app) {
  if (!v.host_perforate) return std::nullopt;
  const std::string family = v.scheme->family;
  if (family != "rows" && family != "cols")
    return not_applicable("host perforation packs the kept lines of rows:K or cols:K; " +
                          v.canonical() + " keeps no whole lines");
  if (app.traits.iterated)
    return not_applicable(std::string(app.name) +
                          " iterates on its own full-grid output, so only its first step could "
                          "read a host-packed input");
  return std::nullopt;
}

std::optional<Verdict> iterations_skip_verdict(const Variant& v, const AppDescriptor& app) {
  if (v.iterations_skip > 0 && !app.traits.iterated)
    return not_applicable(
        "launch perforation (--iterations-skip) applies to iterated apps (hotspot)");
  return std::nullopt;
}

std::optional<Verdict> no_verdict(const Variant&, const AppDescriptor&) { return std::nullopt; }

Choices load_choices(const AxesSpec& axes) {
  Choices out;
  for (const auto& name : split_list(axes.loads)) {
    const LoadDescriptor* load = &find_load(name);
    out.push_back([load](Variant& v) { v.load = load; });
  }
  return out;
}

// Each output scheme with each reconstruction and fill (none for no output scheme).
Choices output_choices(const AxesSpec& axes) {
  std::vector<OutputScheme> outputs;
  for (const auto& name : split_list(axes.outputs)) outputs.push_back(parse_output(name));
  const std::vector<Recon> recons = parse_recon_list(axes.output_recons);
  std::vector<const OutputFillDescriptor*> fills;
  for (const auto& name : split_list(axes.output_fills)) fills.push_back(&find_output_fill(name));
  const bool any_output =
      std::any_of(outputs.begin(), outputs.end(), [](const OutputScheme& o) { return !o.none(); });
  for (const auto* fill : fills)
    if (!any_output && fill != &output_fill_registry().front())
      throw std::invalid_argument(std::string("--output-fill ") + fill->name +
                                  " needs an output scheme (--output rows:K, cols:K or center:K)");
  Choices out;
  for (const auto& output : outputs)
    for (Recon recon : output.none() ? std::vector<Recon>{Recon::kNone} : recons)
      for (const auto* fill :
           output.none() ? std::vector<const OutputFillDescriptor*>{nullptr} : fills)
        out.push_back([output, recon, fill](Variant& v) {
          v.output = output;
          v.output_recon = recon;
          v.output_fill = fill;
        });
  return out;
}

Choices precision_choices(const AxesSpec& axes) {
  Choices out;
  for (const auto& name : split_list(axes.precisions)) {
    const PrecisionDescriptor* precision = &find_precision(name);
    out.push_back([precision](Variant& v) { v.precision = precision; });
  }
  return out;
}

Choices perforate_choices(const AxesSpec& axes) {
  Choices out;
  for (const auto& name : split_list(axes.perforates)) {
    if (name != "device" && name != "host")
      throw std::invalid_argument("unknown --perforate '" + name + "' (valid: device, host)");
    const bool host = name == "host";
    out.push_back([host](Variant& v) { v.host_perforate = host; });
  }
  return out;
}

Choices iterations_skip_choices(const AxesSpec& axes) {
  Choices out;
  for (double skip : parse_iterations_skip_list(axes.iterations_skips))
    out.push_back([skip](Variant& v) { v.iterations_skip = skip; });
  return out;
}

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
       },
       load_choices,
       load_verdict},
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
       },
       output_choices,
       no_verdict},
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
       },
       precision_choices,
       precision_verdict},
      {"perforate",
       {{"perforate", &ResultRow::perforate, nullptr, "device", perforate_name, nullptr}},
       [](const Variant& v) { return v.host_perforate ? std::string("host") : std::string(); },
       [](const Variant&) { return std::string(); },
       [](const Variant& v) {
         if (!v.host_perforate) return std::string();
         return std::string("-DKPERF_PERFORATE_FILE=perforate_host.cl -DKPERF_PACKED_ROWS=") +
                (std::string(v.scheme->family) == "rows" ? "1" : "0");
       },
       perforate_choices,
       perforate_verdict},
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
       [](const Variant&) { return std::string(); },
       iterations_skip_choices,
       iterations_skip_verdict},
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
