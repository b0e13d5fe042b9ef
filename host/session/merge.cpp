// Shards merged (merge.hpp): checked to be one run's (same fingerprint and partition, each shard
// once, none missing, no configuration twice), then the derived fields recomputed from the merged
// rows, keeping every speedup within one physical device.
#include "merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "documents.hpp"
#include "gzip.hpp"
#include "results.hpp"

namespace kperf {

namespace {

struct Shard {
  std::string path;
  nlohmann::json doc;
  int index = 0;
  std::string device_id;  // host and PCI bus (else the OpenCL index)
};

Shard read_shard(const std::string& path) {
  Shard s;
  s.path = path;
  try {
    s.doc = nlohmann::json::parse(read_document(path));
  } catch (const std::exception& e) {
    throw UsageError(path + ": not a readable kperf results file (" + e.what() + ")");
  }
  if (!s.doc.is_object() || s.doc.value("kind", "") != "run" || !s.doc.contains("context"))
    throw UsageError(path + ": not a kperf run document");
  const auto& ctx = s.doc["context"];
  if (!ctx.contains("shard"))
    throw UsageError(path + ": not a shard (written without kperf run --shard I/N)");
  if (!ctx.value("complete", false))
    throw UsageError(path + ": shard " + std::to_string(ctx["shard"].value("index", -1)) +
                     " is incomplete (finish it with --resume)");
  s.index = ctx["shard"].at("index").get<int>();
  // The device's UUID where the driver gives one; else its PCI bus and OpenCL index (two GPUs
  // of one VM reported the same PCI domain and bus on an H200 host).
  const auto& dev = ctx.value("device", nlohmann::json::object());
  s.device_id = ctx.value("host", std::string("?")) + "/" +
                (dev.contains("uuid") ? dev["uuid"].get<std::string>()
                                      : dev.value("pci_bus_id", std::string("pci?")) + "/" +
                                            dev.value("index", std::string("?")));
  return s;
}

nlohmann::json without_shard(nlohmann::json fingerprint) {
  if (fingerprint.contains("options")) fingerprint["options"].erase("shard");
  return fingerprint;
}

// Every check of the shards as one run; throws UsageError naming the first problem.
void check_shards(std::vector<Shard>& shards) {
  const auto& first = shards.front().doc["context"];
  const int count = first["shard"].at("count").get<int>();
  std::map<int, std::string> by_index;
  for (const Shard& s : shards) {
    const auto& ctx = s.doc["context"];
    if (ctx["shard"].at("count").get<int>() != count)
      throw UsageError(s.path + ": a shard of " + std::to_string(ctx["shard"]["count"].get<int>()) +
                       ", " + shards.front().path + " of " + std::to_string(count));
    if (ctx["shard"]["partition"] != first["shard"]["partition"])
      throw UsageError(s.path + ": another partition than " + shards.front().path +
                       " (other apps, variants, shapes or sizes)");
    const auto differ = fingerprint_differences(without_shard(first.at("fingerprint")),
                                                without_shard(ctx.at("fingerprint")));
    if (!differ.empty()) {
      std::string fields;
      for (const auto& f : differ) fields += (fields.empty() ? "" : ", ") + f;
      throw UsageError(s.path + ": measured under other settings than " + shards.front().path +
                       " (" + fields + ")");
    }
    const auto [it, inserted] = by_index.emplace(s.index, s.path);
    if (!inserted)
      throw UsageError("shard " + std::to_string(s.index) + " is given twice (" + it->second +
                       ", " + s.path + ")");
  }
  std::string missing;
  for (int i = 0; i < count; ++i)
    if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  if (!missing.empty())
    throw UsageError("missing shard" +
                     std::string(missing.find(',') == std::string::npos ? " " : "s ") + missing +
                     " of " + std::to_string(count));
  std::map<std::string, int> owner;
  std::size_t owned = 0;
  for (const Shard& s : shards)
    for (const auto& unit : s.doc["context"]["shard"]["owned"]) {
      const auto [it, inserted] = owner.emplace(unit.get<std::string>(), s.index);
      if (!inserted)
        throw UsageError("shards " + std::to_string(it->second) + " and " +
                         std::to_string(s.index) + " both hold " + it->first);
      ++owned;
    }
  if (owned != first["shard"].at("units").get<std::size_t>())
    throw UsageError("the shards hold " + std::to_string(owned) + " of the run's " +
                     std::to_string(first["shard"]["units"].get<std::size_t>()) + " units");
  std::sort(shards.begin(), shards.end(),
            [](const Shard& a, const Shard& b) { return a.index < b.index; });
}

// The merged run built what its shards built: the union of their sources, each file with one
// content (a file two shards built differently is an error). nullopt when a shard recorded none
// (written before context.sources): the merged run then claims none either.
std::optional<std::map<std::string, std::string>> merged_sources(const std::vector<Shard>& shards) {
  std::map<std::string, std::string> sources, from;
  for (const Shard& s : shards) {
    const auto& ctx = s.doc["context"];
    if (!ctx.contains("sources") || !ctx["sources"].is_object()) return std::nullopt;
    for (const auto& [file, sha] : ctx["sources"].items()) {
      if (!sha.is_string())
        throw UsageError(s.path + ": context.sources." + file + " is no digest");
      const auto [it, inserted] = sources.emplace(file, sha.get<std::string>());
      if (inserted) from[file] = s.path;
      if (!inserted && it->second != sha.get<std::string>())
        throw UsageError(s.path + ": built " + file + " with other contents than " + from[file] +
                         " (the shards measured other kernels)");
    }
  }
  return sources;
}

// The merged run's builds: the union of its shards' (a program two shards built is one build).
// nullopt when a shard recorded none (written before context.builds).
std::optional<std::set<std::pair<std::string, std::string>>> merged_builds(
    const std::vector<Shard>& shards) {
  std::set<std::pair<std::string, std::string>> builds;
  for (const Shard& s : shards) {
    if (!s.doc["context"].contains("builds")) return std::nullopt;
    try {
      const auto mine = builds_of(s.doc["context"]);
      builds.insert(mine.begin(), mine.end());
    } catch (const nlohmann::json::exception&) {
      throw UsageError(s.path + ": context.builds is not a list of {source, options}");
    }
  }
  return builds;
}

// Per app, input and size: the accurate kernel's best median on each device, and how far apart
// they lie (max / min - 1).
nlohmann::ordered_json baseline_spread(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::map<std::string, double>> best;
  for (const ResultRow& r : rows)
    if (r.ok() && r.best_wg && r.scheme == "accurate" && r.axes.empty() && r.time) {
      const std::string workload = r.app + "/" + r.input_name + "/" + std::to_string(r.width) +
                                   "x" + std::to_string(r.height);
      best[workload][r.device_id] = r.time->median;
    }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [workload, devices] : best) {
    if (devices.size() < 2) continue;
    double lo = 1e300, hi = 0;
    nlohmann::ordered_json medians;
    for (const auto& [id, median] : devices) {
      medians[id] = median;
      lo = std::min(lo, median), hi = std::max(hi, median);
    }
    out.push_back(
        {{"workload", workload}, {"accurate_median_ns", medians}, {"spread", hi / lo - 1}});
  }
  return out;
}

}  // namespace

MergedRun merge_shards(const std::vector<std::string>& paths, const std::string& command_line) {
  std::vector<Shard> shards;
  for (const std::string& path : paths) shards.push_back(read_shard(path));
  check_shards(shards);
  // Owned rows are the results; a shard's baseline copy is kept only where no owned row of the
  // same configuration comes from the same device (then it gives that device's speedups).
  std::vector<ResultRow> owned, copies;
  std::set<std::pair<std::string, std::string>> owned_keys;  // device, key
  nlohmann::ordered_json shard_info = nlohmann::ordered_json::array();
  std::set<std::string> devices;
  for (const Shard& s : shards) {
    std::size_t n = 0;
    for (const auto& j : s.doc.at("results")) {
      ResultRow r = row_from_json(j);
      r.device_id = s.device_id;
      if (r.shard_baseline) {
        copies.push_back(std::move(r));
      } else {
        owned_keys.insert({r.device_id, r.key});
        owned.push_back(std::move(r));
        ++n;
      }
    }
    devices.insert(s.device_id);
    shard_info.push_back({{"index", s.index},
                          {"file", s.path},
                          {"host", s.doc["context"].value("host", "")},
                          {"device_id", s.device_id},
                          {"results", n},
                          {"harness", s.doc["context"].value("harness", nlohmann::json())}});
  }
  std::vector<ResultRow> rows = owned;
  for (ResultRow& c : copies)
    if (!owned_keys.count({c.device_id, c.key})) rows.push_back(std::move(c));
  annotate(rows);

  const auto sources = merged_sources(shards);
  const auto builds = merged_builds(shards);
  nlohmann::ordered_json ctx = shards.front().doc["context"];
  ctx.erase("shard");
  for (const char* field : {"sources", "sources_sha256", "builds", "builds_sha256"})
    ctx.erase(field);
  if (sources) add_sources(ctx, *sources);
  if (sources && builds) add_builds(ctx, *sources, *builds);
  ctx.erase("harness");
  ctx["fingerprint"] = without_shard(ctx["fingerprint"]);
  ctx["command_line"] = command_line;
  ctx["merge"] = {{"shards", shard_info},
                  {"devices", devices},
                  {"baseline_spread", baseline_spread(rows)},
                  {"method",
                   "results: every shard's own configurations; best launch shapes and speedups "
                   "recomputed from them, each against the baselines measured on the same "
                   "device (a shard measures the baselines its configurations need); baselines: "
                   "those copies from devices that own no such row"}};
  nlohmann::ordered_json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["kind"] = "run";
  doc["context"] = ctx;
  doc["results"] = nlohmann::ordered_json::array();
  doc["baselines"] = nlohmann::ordered_json::array();
  MergedRun merged;
  for (const ResultRow& r : rows) {
    (r.shard_baseline ? doc["baselines"] : doc["results"]).push_back(to_json(r));
    if (!r.shard_baseline) merged.results.push_back(r);
  }
  merged.doc = std::move(doc);
  merged.shards = shards.size();
  merged.devices = devices.size();
  return merged;
}

}  // namespace kperf
