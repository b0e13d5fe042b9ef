// The proofs of `kperf check` (app_check.hpp), each a row of the pass/fail table.
#include "app_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>

#include "runner.hpp"

namespace fs = std::filesystem;

namespace kperf {

const ResultRow* OutputRun::find(const std::string& app, const Variant& v, WorkGroup wg) const {
  for (const auto& r : rows)
    if (r.app == app && r.scheme == v.canonical() && r.recon == recon_name(v.recon) &&
        r.axes == v.axes_key() && r.wg_x == wg.x && r.wg_y == wg.y && r.vec == wg.vec &&
        r.py == wg.py)
      return &r;
  return nullptr;
}

const Grid* OutputRun::output(const std::string& app, const Variant& v, WorkGroup wg) const {
  const ResultRow* row = find(app, v, wg);
  if (!row || !row->ok()) return nullptr;
  const auto it = outputs.find(row->key);
  return it == outputs.end() ? nullptr : &it->second;
}

OutputRun run_for_outputs(ClEnv& env, const std::vector<const AppDescriptor*>& apps,
                          const std::vector<Variant>& variants, const std::vector<WorkGroup>& wgs,
                          const Grid& input, const OutputRunOptions& options) {
  TempDir dir;
  RunConfig cfg;
  cfg.apps = apps;
  cfg.variants = variants;
  cfg.wgs = wgs;
  cfg.warmup = 0;
  cfg.reps = 1;
  cfg.kernel_root = options.kernel_root;
  cfg.extra_build_options = options.extra_build_options;
  cfg.params = options.params;
  cfg.verify = options.verify;
  cfg.input_warnings = false;
  cfg.iterations = options.iterations;
  cfg.transfers = options.transfers;
  if (options.only)
    cfg.only = [only = options.only](const AppDescriptor&, const Variant& v, const WorkGroup& wg) {
      return only(v, wg);
    };
  cfg.save_outputs_dir = (dir.path() / "out").string();
  fs::create_directories(cfg.save_outputs_dir);
  write_npy((dir.path() / "input.npy").string(), input);
  cfg.image_inputs = {{"input", (dir.path() / "input.npy").string(), ""}};
  if (options.power) {
    write_npy((dir.path() / "temp.npy").string(), input);
    write_npy((dir.path() / "power.npy").string(), *options.power);
    cfg.temp_path = (dir.path() / "temp.npy").string();
    cfg.power_path = (dir.path() / "power.npy").string();
  }
  OutputRun result;
  Runner runner(env, cfg);
  runner.run([&](ResultRow row) { result.rows.push_back(std::move(row)); });
  for (const auto& r : result.rows)
    if (r.ok()) result.outputs[r.key] = read_npy(r.output_file);
  return result;
}

std::size_t poison_skipped(const Variant& v, int radius, WorkGroup wg, int gx, int gy,
                           Grid& input) {
  const int w = input.width, h = input.height;
  const auto read = poisons_whole_grid(v) ? elements_read_by_any(v, radius, wg, w, h)
                                          : elements_read_by_group(v, radius, wg, w, h, gx, gy);
  std::size_t n = 0;
  for (std::size_t i = 0; i < read.size(); ++i)
    if (!read[i]) input.data[i] = std::numeric_limits<float>::quiet_NaN(), ++n;
  return n;
}

namespace {

std::string config_label(const Variant& v, WorkGroup wg) {
  std::string label = v.id() + " " + std::to_string(wg.x) + "x" + std::to_string(wg.y);
  if (wg.vec > 1) label += " vec" + std::to_string(wg.vec);
  if (wg.py > 1) label += " py" + std::to_string(wg.py);
  return label;
}

// Where two outputs first differ ("" where they are equal, NaN equal to NaN).
std::string first_difference(const Grid& a, const Grid& b, bool require_finite = false) {
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x) {
      const float p = a.at(y, x), q = b.at(y, x);
      char text[160];
      if (require_finite && !std::isfinite(q)) {
        std::snprintf(text, sizeof text, "non-finite output %g at (%d, %d)", q, y, x);
        return text;
      }
      if (p == q || (std::isnan(p) && std::isnan(q))) continue;
      std::snprintf(text, sizeof text, "%.9g != %.9g at (%d, %d)", p, q, y, x);
      return text;
    }
  return {};
}

// The rows of a run that neither ran nor were refused as not applicable fail their check.
std::optional<std::string> row_problem(const ResultRow* row) {
  if (!row) return "no result row";
  if (row->ok() || row->status == Status::kNotApplicable) return std::nullopt;
  return std::string(status_name(row->status)) + ": " + row->reason;
}

class Checker {
 public:
  Checker(ClEnv& env, const AppDescriptor& app, const Grid& input, const OutputRunOptions& options,
          const std::vector<std::string>& checks)
      : env_(env), app_(app), input_(input), options_(options), checks_(checks) {}

  std::vector<CheckResult> run() {
    if (wants("model") || wants("range") || wants("reproducible") || wants("poison"))
      poison_and_model();
    compare_axis({"load-paths", "accurate,rows:2,cols:2", "nn", nullptr, &AxesSpec::loads,
                  "local,global,image", [](Variant& v, const Variant& r) { v.load = r.load; }});
    compare_axis({"host-device", "rows:2,rows:3,cols:2", "nn,li", nullptr, &AxesSpec::perforates,
                  "device,host",
                  [](Variant& v, const Variant& r) { v.host_perforate = r.host_perforate; }});
    compare_axis({"output-fills", "accurate", "nn",
                  [](AxesSpec& a) {
                    a.outputs = "rows:2,cols:2,center:3";
                    a.output_recons = "nn,li";
                  },
                  &AxesSpec::output_fills, "fused,shared,separate",
                  [](Variant& v, const Variant& r) { v.output_fill = r.output_fill; }});
    return std::move(results_);
  }

 private:
  bool wants(const std::string& check) const {
    return checks_.empty() || std::find(checks_.begin(), checks_.end(), check) != checks_.end();
  }
  void add(const std::string& check, const std::string& config, bool pass, std::string detail) {
    results_.push_back({check, config, pass, std::move(detail)});
  }
  OutputRun run(const std::vector<Variant>& variants, const Grid& input, bool verify = false) {
    OutputRunOptions o = options_;
    o.verify = verify;
    return run_for_outputs(env_, {&app_}, variants, shapes_, input, o);
  }

  // Skipped elements poisoned with NaN must not change the outputs; the outputs match the CPU
  // tile model of their scheme; two runs give the same bits. The range alone needs only the
  // accurate outputs.
  void poison_and_model() {
    const bool schemes = wants("model") || wants("reproducible") || wants("poison");
    const auto variants = parse_variants(
        schemes ? "accurate,stencil,rows:2,rows:3,cols:2,cols:3" : "accurate", "nn,li");
    const OutputRun clean = run(variants, input_, wants("model"));
    const OutputRun again = wants("reproducible") ? run(variants, input_) : OutputRun{};
    for (const Variant& v : variants)
      for (const WorkGroup wg : shapes_) {
        const std::string label = config_label(v, wg);
        const ResultRow* row = clean.find(app_.name, v, wg);
        if (auto problem = row_problem(row)) {
          add("runs", label, false, *problem);
          continue;
        }
        if (!row->ok()) continue;
        const Grid& out = *clean.output(app_.name, v, wg);
        if (wants("model")) model_check(v, wg, *row, out);
        if (wants("range")) range_check(v, wg, out);
        if (wants("reproducible")) {
          const Grid* second = again.output(app_.name, v, wg);
          const std::string diff =
              second ? first_difference(out, *second) : "the second run failed";
          add("reproducible", label, diff.empty(),
              diff.empty() ? "two runs, identical bits" : diff);
        }
        if (wants("poison") && !v.is_accurate()) poison_check(v, wg, out);
      }
  }

  void model_check(const Variant& v, WorkGroup wg, const ResultRow& row, const Grid& out) {
    double scale = 1;
    for (float x : out.data)
      if (std::isfinite(x)) scale = std::max(scale, static_cast<double>(std::fabs(x)));
    const double tolerance = 1e-4 * scale;
    const bool pass = row.model_max_abs && *row.model_max_abs <= tolerance;
    char text[160];
    std::snprintf(text, sizeof text, "max |output - tile model| %.3g (limit %.3g)",
                  row.model_max_abs ? *row.model_max_abs : std::nan(""), tolerance);
    add("model", config_label(v, wg), pass, text);
  }

  void range_check(const Variant& v, WorkGroup wg, const Grid& out) {
    if (!v.is_accurate() || !app_.output_range) return;
    const auto [lo, hi] = *app_.output_range;
    const double slack = 1e-4 * (hi - lo);
    const auto [mn, mx] = std::minmax_element(out.data.begin(), out.data.end());
    const bool inside = *mn >= lo - slack && *mx <= hi + slack;
    char text[160];
    std::snprintf(text, sizeof text, "outputs in [%.6g, %.6g], declared [%.6g, %.6g]", *mn, *mx, lo,
                  hi);
    add("range", config_label(v, wg), inside, text);
  }

  void poison_check(const Variant& v, WorkGroup wg, const Grid& clean) {
    const int w = input_.width, h = input_.height;
    const bool whole = poisons_whole_grid(v);
    const int gx = 2, gy = 2;  // otherwise an interior work-group
    const WorkGroup block = block_of(v, wg);
    Grid poisoned = input_;
    const std::size_t n = poison_skipped(v, app_.radius, wg, gx, gy, poisoned);
    const OutputRun dirty = run({v}, poisoned);
    const std::string label = config_label(v, wg);
    const Grid* out = dirty.output(app_.name, v, wg);
    if (!out) {
      add("poison", label, false, row_problem(dirty.find(app_.name, v, wg)).value_or("no output"));
      return;
    }
    Grid a = clean, b = *out;
    if (!whole) {  // only the chosen group's outputs are comparable
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          if (x / block.x != gx || y / block.y != gy) a.at(y, x) = b.at(y, x) = 0;
    }
    const std::string diff = first_difference(a, b, true);
    add("poison", label, diff.empty(),
        diff.empty() ? std::to_string(n) + " skipped elements NaN, outputs unchanged"
                     : "a skipped element reached the output: " + diff);
  }

  // One comparison: variants that differ only in one axis (`field` of the command line's lists,
  // its values `values`, the first the reference) must give identical outputs.
  struct AxisComparison {
    const char* check;
    const char* schemes;
    const char* recons;
    void (*other_axes)(AxesSpec&);  // nullptr: the other axes at their defaults
    std::string AxesSpec::*field;
    const char* values;
    void (*align)(Variant& v, const Variant& reference);  // v given the reference's value
  };

  void compare_axis(const AxisComparison& c) {
    if (!wants(c.check)) return;
    AxesSpec axes;
    axes.schemes = c.schemes;
    axes.recons = c.recons;
    if (c.other_axes) c.other_axes(axes);
    AxesSpec reference_axes = axes;
    axes.*c.field = c.values;
    const std::string values = c.values;
    reference_axes.*c.field = values.substr(0, values.find(','));
    const std::vector<Variant> variants = parse_variants(axes);
    const OutputRun outcome = run(variants, input_);
    for (const Variant& reference : parse_variants(reference_axes))
      for (const Variant& v : variants) {
        Variant aligned = v;
        c.align(aligned, reference);
        if (v.id() == reference.id() || aligned.id() != reference.id()) continue;
        for (const WorkGroup wg : shapes_) {
          const std::string label = config_label(v, wg) + " vs " + config_label(reference, wg);
          const ResultRow* a = outcome.find(app_.name, reference, wg);
          const ResultRow* b = outcome.find(app_.name, v, wg);
          auto problem = row_problem(b);
          if (!problem) problem = row_problem(a);
          if (problem) {
            add(c.check, label, false, *problem);
            continue;
          }
          if (!a->ok() || !b->ok()) continue;  // not applicable here
          const std::string diff = first_difference(*outcome.output(app_.name, reference, wg),
                                                    *outcome.output(app_.name, v, wg));
          add(c.check, label, diff.empty(), diff.empty() ? "identical outputs" : diff);
        }
      }
  }

  ClEnv& env_;
  const AppDescriptor& app_;
  const Grid& input_;
  OutputRunOptions options_;
  const std::vector<std::string>& checks_;
  const std::vector<WorkGroup> shapes_ = {{8, 8, 1, 1}, {4, 8, 4, 1}};
  std::vector<CheckResult> results_;
};

}  // namespace

const std::vector<std::string>& check_names() {
  static const std::vector<std::string> names = {
      "model", "range", "reproducible", "poison", "load-paths", "host-device", "output-fills"};
  return names;
}

std::vector<CheckResult> check_app(ClEnv& env, const AppDescriptor& app, const Grid& input,
                                   const OutputRunOptions& options,
                                   const std::vector<std::string>& checks) {
  return Checker(env, app, input, options, checks).run();
}

}  // namespace kperf
