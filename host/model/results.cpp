// Result rows, their JSON form, the derived best-work-group/speedup fields, and the summary.
#include "results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "kernel_axes.hpp"
#include "structural_axes.hpp"

namespace kperf {

std::string wg_label(int wg_x, int wg_y, int vec, int py) {
  return std::to_string(wg_x) + "x" + std::to_string(wg_y) +
         (vec != 1 ? "v" + std::to_string(vec) : std::string()) +
         (py != 1 ? "y" + std::to_string(py) : std::string());
}

std::string broken_truth_reason(std::int64_t nonfinite, std::int64_t elements,
                                const std::string& truth) {
  return "the truth (" + truth + ") is non-finite in " + std::to_string(nonfinite) + " of " +
         std::to_string(elements) +
         " elements of a finite input: nothing can be measured against it";
}

std::string make_key(const std::string& app, const std::string& scheme, const std::string& recon,
                     const std::string& axes, int wg_x, int wg_y, int vec, int py,
                     const std::string& input, int width, int height) {
  return app + "/" + scheme + "/" + recon + (axes.empty() ? "" : "/" + axes) +
         "/wg:" + wg_label(wg_x, wg_y, vec, py) + "/" + input + "/" + std::to_string(width) + "x" +
         std::to_string(height);
}

nlohmann::ordered_json stats_json(const TimingStats& t) {
  return {{"median", t.median}, {"mean", t.mean},     {"min", t.min},
          {"max", t.max},       {"stddev", t.stddev}, {"cv", t.cv}};
}

TimingStats stats_from_json(const nlohmann::json& t) {
  return TimingStats{t.at("median").get<double>(), t.at("mean").get<double>(),
                     t.at("min").get<double>(),    t.at("max").get<double>(),
                     t.at("stddev").get<double>(), t.at("cv").get<double>()};
}

nlohmann::ordered_json axis_defaults_json() {
  // The structural axes' fields (a numeric one defaults to 0; output_fill's absence depends on
  // the output scheme and is documented, not tabled), then the kernel axes' values[0].
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const StructuralAxis& axis : structural_axes())
    for (const AxisField& field : axis.fields) {
      if (field.number)
        j[field.name] = 0;
      else if (*field.default_text)
        j[field.name] = field.default_text;
    }
  for (const KernelAxis& axis : kernel_axes()) {
    const char* name = axis.values[0].name;
    if (axis.numeric_field)
      j[axis.field] = std::stoi(name);
    else
      j[axis.field] = name;
  }
  return j;
}

namespace {

// --transfers: the medians, host packing against its memcpy, and every sample.
void add_transfers(const ResultRow::TransferSamples& t, nlohmann::ordered_json& j) {
  j["transfer_ns"] = {{"write", stats_json(summarize(t.write))},
                      {"read", stats_json(summarize(t.read))}};
  j["host_pack_ns"] = summarize(t.host_pack).median;
  if (!t.host_memcpy.empty()) {
    // Bandwidths in bytes written per ns (GB/s): packing against a memcpy of those bytes.
    const double pack = summarize(t.host_pack).median, copy = summarize(t.host_memcpy).median;
    j["host_pack"] = {{"bytes", t.host_bytes},
                      {"pack_gbps", pack > 0 ? t.host_bytes / pack : 0.0},
                      {"memcpy_ns", copy},
                      {"memcpy_gbps", copy > 0 ? t.host_bytes / copy : 0.0},
                      {"of_memcpy", pack > 0 && copy > 0 ? copy / pack : 0.0}};
    if (!t.host_read_lines.empty()) {
      // The packing's floor in the same unit: of_memcpy cannot exceed floor_of_memcpy.
      const double read = summarize(t.host_read_lines).median;
      j["host_pack"]["read_bytes"] = t.host_read_bytes;
      j["host_pack"]["read_ns"] = read;
      j["host_pack"]["read_gbps"] = read > 0 ? t.host_read_bytes / read : 0.0;
      j["host_pack"]["floor_of_memcpy"] = read > 0 && copy > 0 ? copy / read : 0.0;
    }
  }
  j["end_to_end_ns"] = summarize(t.end_to_end).median;
  j["transfer_samples_ns"] = {{"write", t.write},
                              {"read", t.read},
                              {"host_pack", t.host_pack},
                              {"kernel", t.kernel},
                              {"end_to_end", t.end_to_end}};
  if (!t.host_memcpy.empty()) j["transfer_samples_ns"]["host_memcpy"] = t.host_memcpy;
  if (!t.host_read_lines.empty()) j["transfer_samples_ns"]["host_read_lines"] = t.host_read_lines;
}

}  // namespace

nlohmann::ordered_json to_json(const ResultRow& r) {
  nlohmann::ordered_json j;
  j["key"] = r.key;
  j["app"] = r.app;
  j["scheme"] = r.scheme;
  j["skip"] = r.skip;
  j["recon"] = r.recon;
  for (const StructuralAxis& axis : structural_axes())
    for (const AxisField& field : axis.fields) {
      if (field.number)
        j[field.name] = r.*field.number;
      else if (!(r.*field.text).empty())  // output_fill without an output scheme
        j[field.name] = r.*field.text;
    }
  for (const KernelAxis& axis : kernel_axes()) {
    const auto value = r.kernel_axes.find(axis.field);
    if (value == r.kernel_axes.end()) continue;
    if (axis.numeric_field)
      j[axis.field] = std::stoi(value->second);
    else
      j[axis.field] = value->second;
  }
  j["axes"] = r.axes;
  j["variant"] = r.variant;
  j["id"] = r.app + "/" + r.variant + "/wg:" + wg_label(r.wg_x, r.wg_y, r.vec, r.py);
  if (!r.family.empty()) j["family"] = r.family;
  j["wg"] = {r.wg_x, r.wg_y};
  j["vec"] = r.vec;
  j["py"] = r.py;
  j["block"] = {r.wg_x * r.vec, r.wg_y * r.py};
  j["input"] = {{"name", r.input_name}, {"width", r.width}, {"height", r.height}};
  j["iterations"] = r.iterations;
  j["status"] = status_name(r.status);
  if (!r.ok()) j["reason"] = r.reason;
  if (!r.build_log.empty()) j["build_log"] = r.build_log;
  if (r.kernel_info)
    j["kernel"] = {{"max_work_group_size", r.kernel_info->max_work_group_size},
                   {"private_mem_bytes", r.kernel_info->private_mem_bytes},
                   {"local_mem_bytes", r.kernel_info->local_mem_bytes}};
  if (!r.note.empty()) j["note"] = r.note;
  if (r.time) {
    j["time_ns"] = stats_json(*r.time);
    j["samples_ns"] = r.samples_ns;
    if (!r.stop_reason.empty()) j["stop_reason"] = r.stop_reason;
    if (!r.round_start_ns.empty()) j["round_start_ns"] = r.round_start_ns;
    j["bytes_model"] = r.bytes_model;
    j["gbps"] = r.gbps;
    j["copy_gbps"] = r.copy_gbps;
    j["roofline"] = r.roofline;
  }
  if (!r.transfer_samples.empty()) add_transfers(r.transfer_samples, j);
  j["primary_metric"] = r.primary_metric;
  if (!r.reference.empty()) j["reference"] = r.reference;
  if (r.error) j["error"] = to_json(*r.error);
  if (!r.error_reps.empty()) {
    j["error_reps"] = r.error_reps;
    j["error_spread"] = {{"min", *std::min_element(r.error_reps.begin(), r.error_reps.end())},
                         {"max", *std::max_element(r.error_reps.begin(), r.error_reps.end())}};
  }
  if (r.model_max_abs) j["model_max_abs"] = *r.model_max_abs;
  if (r.energy_requested) {
    j["energy"] = r.energy;
    if (!r.energy_problem.empty()) j["energy_problem"] = r.energy_problem;
  }
  if (!r.clocks.is_null()) j["clocks"] = r.clocks;
  j["speedup"] = r.speedup ? nlohmann::ordered_json(*r.speedup) : nlohmann::ordered_json();
  j["speedup_same_wg"] =
      r.speedup_same_wg ? nlohmann::ordered_json(*r.speedup_same_wg) : nlohmann::ordered_json();
  j["speedup_vs_global"] =
      r.speedup_vs_global ? nlohmann::ordered_json(*r.speedup_vs_global) : nlohmann::ordered_json();
  if (!r.transfer_samples.empty()) {
    j["speedup_end_to_end"] = r.speedup_end_to_end ? nlohmann::ordered_json(*r.speedup_end_to_end)
                                                   : nlohmann::ordered_json();
    j["speedup_transfer"] =
        r.speedup_transfer ? nlohmann::ordered_json(*r.speedup_transfer) : nlohmann::ordered_json();
  }
  j["best_wg"] = r.best_wg;
  if (!r.output_file.empty()) j["output_file"] = r.output_file;
  if (!r.device_id.empty()) j["device_id"] = r.device_id;
  if (r.shard_baseline) j["shard_baseline"] = true;
  return j;
}

namespace {

// The timing fields of a measured row (time_ns and its samples) and its transfer samples.
void read_timing_json(const nlohmann::json& j, ResultRow& r) {
  if (j.contains("time_ns")) {
    r.time = stats_from_json(j.at("time_ns"));
    r.samples_ns = j.at("samples_ns").get<std::vector<std::uint64_t>>();
    if (j.contains("round_start_ns"))
      r.round_start_ns = j.at("round_start_ns").get<std::vector<std::uint64_t>>();
    r.bytes_model = j.at("bytes_model").get<double>();
    r.gbps = j.at("gbps").get<double>();
    r.copy_gbps = j.value("copy_gbps", 0.0);
    r.roofline = j.at("roofline").get<double>();
  }
  if (j.contains("transfer_samples_ns")) {
    const auto& t = j.at("transfer_samples_ns");
    auto list = [&](const char* name) { return t.at(name).get<std::vector<std::uint64_t>>(); };
    r.transfer_samples = {};
    auto& samples = r.transfer_samples;
    samples.write = list("write");
    samples.read = list("read");
    samples.host_pack = list("host_pack");
    samples.kernel = list("kernel");
    samples.end_to_end = list("end_to_end");
    if (t.contains("host_memcpy")) {
      r.transfer_samples.host_memcpy = list("host_memcpy");
      r.transfer_samples.host_bytes = j.at("host_pack").at("bytes").get<std::uint64_t>();
    }
    if (t.contains("host_read_lines")) {
      r.transfer_samples.host_read_lines = list("host_read_lines");
      r.transfer_samples.host_read_bytes = j.at("host_pack").at("read_bytes").get<std::uint64_t>();
    }
  }
}

}  // namespace

ResultRow row_from_json(const nlohmann::json& j) {
  ResultRow r;
  r.key = j.at("key").get<std::string>();
  r.axes = j.value("axes", std::string());
  if (j.contains("variant")) {
    r.variant = j.at("variant").get<std::string>();
  } else {  // rows written before the field: the key's segments between the app and the shape
    const std::string key = j.at("key").get<std::string>();
    const std::size_t begin = key.find('/') + 1, end = key.find("/wg:");
    r.variant = end == std::string::npos ? key : key.substr(begin, end - begin);
  }
  r.family = j.value("family", std::string());
  r.app = j.at("app").get<std::string>();
  r.scheme = j.at("scheme").get<std::string>();
  r.skip = j.at("skip").get<int>();
  r.recon = j.at("recon").get<std::string>();
  // Version-1 rows have none of the version-2 axes: their defaults.
  for (const StructuralAxis& axis : structural_axes())
    for (const AxisField& field : axis.fields) {
      if (field.number)
        r.*field.number = j.value(field.name, 0.0);
      else
        r.*field.text = j.value(field.name, std::string(field.default_text));
    }
  // Output schemes were filled by a second launch before the fill became an axis.
  if (r.output_fill.empty() && r.output != "none") r.output_fill = "separate";
  for (const KernelAxis& axis : kernel_axes()) {
    if (!j.contains(axis.field)) continue;  // an app it does not apply to, or an older row
    const auto& value = j.at(axis.field);
    r.kernel_axes[axis.field] =
        value.is_number() ? std::to_string(value.get<int>()) : value.get<std::string>();
  }
  r.wg_x = j.at("wg").at(0).get<int>();
  r.wg_y = j.at("wg").at(1).get<int>();
  r.vec = j.value("vec", 1);
  r.py = j.value("py", 1);
  r.input_name = j.at("input").at("name").get<std::string>();
  r.width = j.at("input").at("width").get<int>();
  r.height = j.at("input").at("height").get<int>();
  r.iterations = j.value("iterations", 1);
  r.status = parse_status(j.at("status").get<std::string>());
  r.reason = j.value("reason", std::string());
  r.build_log = j.value("build_log", std::string());
  if (j.contains("kernel")) {
    const auto& k = j.at("kernel");
    r.kernel_info = ResultRow::KernelInfo{k.at("max_work_group_size").get<std::uint64_t>(),
                                          k.at("private_mem_bytes").get<std::uint64_t>(),
                                          k.at("local_mem_bytes").get<std::uint64_t>()};
  }
  r.note = j.value("note", std::string());
  r.stop_reason = j.value("stop_reason", std::string());
  read_timing_json(j, r);
  r.primary_metric = j.value("primary_metric", std::string());
  r.reference = j.value("reference", std::string());
  if (j.contains("error")) r.error = errors_from_json(j.at("error"));
  if (j.contains("error_reps")) r.error_reps = j.at("error_reps").get<std::vector<double>>();
  if (j.contains("model_max_abs")) r.model_max_abs = j.at("model_max_abs").get<double>();
  if (j.contains("energy")) {
    r.energy_requested = true;
    r.energy = j.at("energy");
    r.energy_problem = j.value("energy_problem", std::string());
  }
  if (j.contains("clocks")) r.clocks = j.at("clocks");
  if (j.contains("speedup") && !j.at("speedup").is_null())
    r.speedup = j.at("speedup").get<double>();
  if (j.contains("speedup_same_wg") && !j.at("speedup_same_wg").is_null())
    r.speedup_same_wg = j.at("speedup_same_wg").get<double>();
  if (j.contains("speedup_vs_global") && !j.at("speedup_vs_global").is_null())
    r.speedup_vs_global = j.at("speedup_vs_global").get<double>();
  r.best_wg = j.value("best_wg", false);
  r.output_file = j.value("output_file", std::string());
  r.device_id = j.value("device_id", std::string());
  r.shard_baseline = j.value("shard_baseline", false);
  return r;
}

namespace {

// device (merged shards), app, input, width, height
using Workload = std::tuple<std::string, std::string, std::string, int, int>;
Workload workload_of(const ResultRow& r) {
  return {r.device_id, r.app, r.input_name, r.width, r.height};
}
using Group = std::tuple<Workload, std::string, std::string, std::string>;  // + scheme, recon, axes
Group group_of(const ResultRow& r) { return {workload_of(r), r.scheme, r.recon, r.axes}; }
// The papers' baseline: accurate with every other axis at its default.
bool is_baseline(const ResultRow& r) { return r.scheme == "accurate" && r.axes.empty(); }
// Paraprox's baseline: accurate read straight from global memory.
bool is_global_baseline(const ResultRow& r) {
  return r.scheme == "accurate" && r.axes == "load:global";
}

}  // namespace

void annotate(std::vector<ResultRow>& rows) {
  std::map<Group, std::size_t> best;  // fastest ok row per group
  std::map<std::tuple<Workload, int, int, int, int>, double> accurate_at;  // accurate per wg
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ResultRow& r = rows[i];
    r.best_wg = false;
    r.speedup.reset();
    r.speedup_same_wg.reset();
    r.speedup_vs_global.reset();
    r.speedup_end_to_end.reset();
    r.speedup_transfer.reset();
    if (!r.ok() || !r.time) continue;
    auto [it, inserted] = best.emplace(group_of(r), i);
    if (!inserted && r.time->median < rows[it->second].time->median) it->second = i;
    if (is_baseline(r)) accurate_at[{workload_of(r), r.wg_x, r.wg_y, r.vec, r.py}] = r.time->median;
  }
  std::map<Workload, double> accurate_best, global_best;
  for (const auto& [group, index] : best) {
    rows[index].best_wg = true;
    if (is_baseline(rows[index])) accurate_best[std::get<0>(group)] = rows[index].time->median;
    if (is_global_baseline(rows[index])) global_best[std::get<0>(group)] = rows[index].time->median;
  }
  for (auto& r : rows) {
    if (!r.ok() || !r.time || r.time->median <= 0) continue;
    const auto acc = accurate_best.find(workload_of(r));
    const double best_median = rows[best.at(group_of(r))].time->median;
    if (acc != accurate_best.end()) r.speedup = acc->second / best_median;
    const auto glob = global_best.find(workload_of(r));
    if (glob != global_best.end()) r.speedup_vs_global = glob->second / best_median;
    const auto same = accurate_at.find({workload_of(r), r.wg_x, r.wg_y, r.vec, r.py});
    if (same != accurate_at.end()) r.speedup_same_wg = same->second / r.time->median;
  }
  // End to end and transfers: against the baseline row chosen above (accurate, its best wg).
  std::map<Workload, const ResultRow*> baseline_row;
  for (const auto& [group, index] : best)
    if (is_baseline(rows[index]) && !rows[index].transfer_samples.empty())
      baseline_row[std::get<0>(group)] = &rows[index];
  auto transfer_median = [](const ResultRow& r) {
    return summarize(r.transfer_samples.write).median + summarize(r.transfer_samples.read).median;
  };
  std::map<Workload, std::pair<double, double>> baseline;  // end to end, write + read
  for (const auto& [wl, row] : baseline_row)
    baseline[wl] = {summarize(row->transfer_samples.end_to_end).median, transfer_median(*row)};
  for (auto& r : rows) {
    if (!r.ok() || r.transfer_samples.empty()) continue;
    const auto base = baseline.find(workload_of(r));
    if (base == baseline.end()) continue;
    const double e2e = summarize(r.transfer_samples.end_to_end).median, tr = transfer_median(r);
    if (e2e > 0) r.speedup_end_to_end = base->second.first / e2e;
    if (tr > 0) r.speedup_transfer = base->second.second / tr;
  }
}

std::string summary_table(const std::vector<ResultRow>& rows) {
  std::ostringstream out;
  auto input_of = [](const ResultRow& r) {
    return r.input_name + "@" + std::to_string(r.width) + "x" + std::to_string(r.height);
  };
  // The input column as wide as its longest name: a cut name could read as another input.
  int input_width = 5;
  for (const auto& r : rows)
    if (r.ok() && r.best_wg)
      input_width = std::max(input_width, static_cast<int>(input_of(r).size()));
  char line[512];
  std::snprintf(line, sizeof line, "%-10s %-10s %-5s %-*s %-9s %12s %8s %9s %8s\n", "app", "scheme",
                "recon", input_width, "input", "best wg", "median ms", "speedup", "error",
                "roofline");
  // Rows with other axes name them after the reconstruction ("+ load:global/out:rows:2/nn").
  out << line;
  std::map<std::string, std::size_t> not_ok;
  for (const auto& r : rows) {
    if (!r.ok()) {
      ++not_ok[status_name(r.status)];
      continue;
    }
    if (!r.best_wg) continue;
    const std::string input = input_of(r);
    const std::string wg = wg_label(r.wg_x, r.wg_y, r.vec, r.py);
    std::string err = "-";
    if (r.error && !is_baseline(r)) {
      const double v = r.primary_metric == "me" ? r.error->me : r.error->mre;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f%% %s", 100.0 * v, r.primary_metric.c_str());
      err = buf;
    }
    char speed[32] = "-";
    if (r.speedup) std::snprintf(speed, sizeof speed, "%.2fx", *r.speedup);
    std::snprintf(line, sizeof line, "%-10s %-10s %-5s %-*s %-9s %12.4f %8s %9s %8.2f\n",
                  r.app.c_str(), r.scheme.c_str(), r.recon.c_str(), input_width, input.c_str(),
                  wg.c_str(), r.time->median / 1e6, speed, err.c_str(), r.roofline);
    out << line;
    if (!r.axes.empty()) out << "           + " << r.axes << "\n";
  }
  if (!not_ok.empty()) {
    out << "not run:";
    for (const auto& [status, count] : not_ok) out << " " << count << " " << status;
    out << " (reasons in the JSON)\n";
  }
  return out.str();
}

}  // namespace kperf
