// Chains of stages (chain.hpp): their names, keys and labels, and which stages connect.
#include "chain.hpp"

#include <algorithm>
#include <stdexcept>

#include "fused_rows.hpp"
#include "injected_faults.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "results.hpp"
#include "strings.hpp"

namespace kperf {

bool exact_chain(const Chain& chain) {
  return std::all_of(chain.begin(), chain.end(),
                     [](const PipelineStage& s) { return is_exact(s.variant); });
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& named_pipelines() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> named = {
      {"blur-edges", {"gaussian5", "sobel3"}}, {"denoise-edges", {"median", "sobel3"}}};
  return named;
}

std::vector<const AppDescriptor*> parse_pipeline(const std::string& text) {
  std::vector<std::string> names;
  for (const auto& [name, apps] : named_pipelines())
    if (name == text) names = apps;
  if (names.empty()) names = split_list(text);
  std::vector<const AppDescriptor*> apps;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string where = "--pipeline " + text + ": stage " + std::to_string(i + 1);
    const AppDescriptor* app = nullptr;
    try {
      app = &find_app(names[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    if (!app->takes_images() || app->traits.iterated || app->traits.second_input)
      throw std::invalid_argument(where + " (" + app->name +
                                  ") cannot connect: a stage reads one image and writes one");
    apps.push_back(app);
  }
  if (apps.size() < 2) {
    std::string known;
    for (const auto& [name, chain] : named_pipelines()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("--pipeline " + text + ": a chain of two or more apps (" + known +
                                ", or APP,APP[,...])");
  }
  return apps;
}

std::string stage_label(const PipelineStage& s) {
  return s.app->name + ":" + s.variant.id() + "@" + wg_label(s.wg.x, s.wg.y, s.wg.vec, s.wg.py);
}

namespace {

std::string stages_label(const Chain& chain) {
  std::string label;
  for (const PipelineStage& s : chain) label += (label.empty() ? "" : " > ") + stage_label(s);
  return label;
}

}  // namespace

std::string fused_segment(const Chain& chain) {
  if (!is_fused(chain)) return std::string();
  const int rows = fuse_rows(chain);
  return rows ? "fused-rows:" + std::to_string(rows) : std::string("fused");
}

std::string chain_label(const Chain& chain) {
  return (is_fused(chain) ? fused_segment(chain) + ": " : "") + stages_label(chain);
}

std::string chain_key(const std::string& pipeline, const Chain& chain, const std::string& input,
                      int width, int height) {
  return pipeline + (is_fused(chain) ? "/" + fused_segment(chain) + "/" : "/") +
         stages_label(chain) + "/" + input + "/" + std::to_string(width) + "x" +
         std::to_string(height);
}

std::string config_key(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input, int width, int height) {
  return make_key(app.name, v.canonical(), recon_name(v.recon), v.axes_key(), wg.x, wg.y, wg.vec,
                  wg.py, input, width, height);
}

std::string key_to_filename(const std::string& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (key.compare(i, 3, " > ") == 0) {  // a chain's stages
      out += "+";
      i += 2;
    } else {
      out += c == '/' ? std::string("__") : c == ':' ? std::string("-") : std::string(1, c);
    }
  }
  return out + ".npy";
}

void write_output_npy(const std::string& file, std::vector<float> values, int width, int height) {
  if (fault("save")) throw std::runtime_error(file + ": injected fault (KPERF_FAULT=save)");
  Grid g(width, height);
  g.data = std::move(values);
  write_npy(file, g);
}

const StorageType& intermediate_type(const Variant& prev) { return *prev.precision_info().out; }

std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next) {
  const StorageType &out = intermediate_type(prev), &in = *next.precision_info().in;
  if (&out != &in)
    return std::string("the stage before stores ") + out.name + " and this stage reads " + in.name +
           " (" + next.precision_info().name + "): the buffer between is one type";
  if (next.host_perforate)
    return std::string(
        "host perforation packs the input on the host; this stage's input is on the device");
  if (next.load_path().reads_image)
    return std::string("the image load path reads an image; this stage's input is a buffer");
  return std::nullopt;
}

std::string stage_prefix(const Chain& chain, int k) {
  if (k < 0) return std::string();
  return stage_prefix(chain.size(), static_cast<std::size_t>(k),
                      *chain[static_cast<std::size_t>(k)].app);
}

std::string stage_prefix(std::size_t stages, std::size_t k, const AppDescriptor& app) {
  if (stages < 2) return std::string();
  return "stage " + std::to_string(k + 1) + " (" + app.name + "): ";
}

}  // namespace kperf
