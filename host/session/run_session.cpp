// kperf run's session (run_session.hpp): the document it writes and resumes, its context and
// fingerprint, and the share of a sharded run.
#include "run_session.hpp"

#include <chrono>
#include <cstdio>

#include "gzip.hpp"
#include "parallel.hpp"
#include "shard.hpp"
#include "strings.hpp"

namespace kperf {

// The context block of a run's JSON: what was run, how, and with which device state.
nlohmann::ordered_json run_context(const std::string& command_line, const ClEnv& env,
                                   const RunConfig& cfg, const Runner& runner,
                                   const std::string& binary_cache) {
  nlohmann::ordered_json ctx = base_context(command_line, env, cfg.kernel_root);
  ctx["warmup"] = cfg.warmup;
  ctx["reps"] = cfg.reps;
  if (cfg.max_cv > 0) ctx["max_cv"] = {{"max_cv", cfg.max_cv}, {"max_reps", cfg.max_reps}};
  if (cfg.rounds > 1)
    ctx["rounds"] = {{"rounds", cfg.rounds},
                     {"method",
                      "every configuration of a workload set up first, then timed in rounds: "
                      "round r (from 0) takes samples [reps*r/rounds, reps*(r+1)/rounds) of "
                      "every configuration, each after its own warm-up, in the order of the "
                      "sweep, reversed in odd rounds; round_start_ns dates each round"}};
  if (!cfg.default_size.is_null()) ctx["default_size"] = cfg.default_size;
  ctx["iterations"] = cfg.iterations;
  ctx["bilateral_sigmas"] = {{"color", cfg.params.sigma_color}, {"space", cfg.params.sigma_space}};
  ctx["extra_build_options"] = cfg.extra_build_options;
  ctx["copy_gbps"] = runner.copies().largest_gbps();
  ctx["copy"] = runner.copies().json();
  ctx["binary_cache"] = binary_cache_json(env, binary_cache);
  if (cfg.energy_requested) ctx["energy"] = runner.energy_json();
  if (!cfg.shard_json.is_null()) ctx["shard"] = cfg.shard_json;
  ctx["cold"] = cfg.cold ? nlohmann::ordered_json{{"flush_bytes", runner.flush_bytes()},
                                                  {"method",
                                                   "clEnqueueFillBuffer of flush_bytes "
                                                   "before every timed sample (hotspot: "
                                                   "before its first step)"}}
                         : nlohmann::ordered_json(false);
  if (cfg.transfers)
    ctx["transfers"] = {
        {"host_memory",
         "pinned: CL_MEM_ALLOC_HOST_PTR buffers, mapped once, as upload source and "
         "download target"},
        {"host_pack",
         "steady_clock around packing and/or half conversion into the pinned upload "
         "buffer, on " +
             std::to_string(host_threads()) +
             " threads; 0 for f32 "
             "device perforation, whose input already sits in pinned memory"},
        {"end_to_end",
         "host_pack + write + kernels + read, per repetition; the queue drains "
         "between repetitions"}};
  return ctx;
}

// Keeps the configurations of shard `shard` (and the accurate baselines its speedups need, on
// this device) and describes the partition for the context; returns the units it owns.
std::set<std::string> restrict_to_shard(RunConfig& cfg, const ShardSpec& shard) {
  double pixels = 0;
  for (const auto& [w, h] : cfg.sizes) pixels += static_cast<double>(w) * h;
  if (pixels == 0) pixels = 1;
  // A baseline: accurate with every axis at its default, or on the global load path (Paraprox).
  auto baseline = [](const Variant& v) {
    return v.is_accurate() && (v.axes_key().empty() || v.axes_key() == "load:global");
  };
  std::vector<ShardUnit> units;
  for (const AppDescriptor* app : cfg.apps)
    for (const Variant& v : cfg.variants) {
      std::size_t shapes = 0;
      for (const WorkGroup& wg : cfg.wgs) shapes += !cfg.only || cfg.only(*app, v, wg) ? 1 : 0;
      if (shapes)
        units.push_back({app->name + "/" + v.id(), static_cast<double>(shapes) * pixels, app->name,
                         baseline(v)});
    }
  const std::vector<int> assigned = assign_shards(units, shard.count);
  std::set<std::string> owned, owned_apps;
  nlohmann::ordered_json owned_ids = nlohmann::ordered_json::array();
  std::string partition;
  for (std::size_t i = 0; i < units.size(); ++i) {
    partition += units[i].id + "=" + std::to_string(assigned[i]) + ";";
    if (assigned[i] != shard.index) continue;
    owned.insert(units[i].id);
    owned_ids.push_back(units[i].id);
    owned_apps.insert(units[i].id.substr(0, units[i].id.find('/')));
  }
  auto before = cfg.only;
  cfg.only = [before, owned, owned_apps, baseline](const AppDescriptor& app, const Variant& v,
                                                   const WorkGroup& wg) {
    if (before && !before(app, v, wg)) return false;
    return owned.count(app.name + "/" + v.id()) > 0 ||
           (owned_apps.count(app.name) > 0 && baseline(v));
  };
  cfg.shard_json = {{"index", shard.index},
                    {"count", shard.count},
                    {"units", units.size()},
                    {"partition", fnv1a_hex(partition)},
                    {"owned", owned_ids}};
  return owned;
}

// Every option that changes what a row measures; the lists a key names may grow on resume.
nlohmann::ordered_json run_fingerprint(const ClEnv& env, const RunConfig& cfg) {
  nlohmann::ordered_json fingerprint =
      make_fingerprint(env, cfg.kernel_root,
                       {{"warmup", cfg.warmup},
                        {"reps", cfg.reps},
                        {"iterations", cfg.iterations},
                        {"cl_options", cfg.extra_build_options},
                        {"bilateral_sigmas", {cfg.params.sigma_color, cfg.params.sigma_space}},
                        {"cold", cfg.cold},
                        {"max_cv", cfg.max_cv > 0 ? nlohmann::ordered_json{cfg.max_cv, cfg.max_reps}
                                                  : nlohmann::ordered_json(nullptr)},
                        {"transfers", cfg.transfers},
                        {"metrics_on", cfg.metrics_on}});
  // A shard resumes only as itself; kperf merge compares fingerprints without this field.
  if (!cfg.shard_json.is_null())
    fingerprint["options"]["shard"] = std::to_string(cfg.shard_json["index"].get<int>()) + "/" +
                                      std::to_string(cfg.shard_json["count"].get<int>());
  // Only with --rounds, so that files measured before the option still resume.
  if (cfg.rounds > 1) fingerprint["options"]["rounds"] = cfg.rounds;
  // Only with --energy, so that files measured before the option still resume.
  if (cfg.energy_requested)
    fingerprint["options"]["energy"] = {{"source", cfg.energy ? cfg.energy->source() : "none"},
                                        {"window_s", cfg.energy_options.window_s},
                                        {"reps", cfg.energy_options.reps}};
  return fingerprint;
}

// The rows of the document --resume continues (its fingerprint must be this run's).
std::vector<ResultRow> resumed_rows(const std::string& path,
                                    const nlohmann::ordered_json& fingerprint) {
  std::vector<ResultRow> rows;
  const nlohmann::json old = read_resumable(path, "run", fingerprint);
  try {
    for (const auto& j : old.at("results")) rows.push_back(row_from_json(j));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("--resume: " + path + " has a row kperf cannot read (" + e.what() + ")");
  }
  return rows;
}

std::vector<ResultRow> RunDocument::write(const std::vector<ResultRow>& rows, bool complete,
                                          const nlohmann::ordered_json& error) {
  std::vector<ResultRow> annotated = rows;
  annotate(annotated);
  nlohmann::ordered_json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["kind"] = "run";
  nlohmann::ordered_json ctx = run_context(command_line_, env_, cfg_, runner_, binary_cache_);
  ctx["fingerprint"] = fingerprint_;
  ctx["axis_defaults"] = axis_defaults_json();
  ctx["complete"] = complete;
  if (!error.is_null()) ctx["error"] = error;
  ctx["harness"] = harness(rows);
  doc["context"] = ctx;
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& r : annotated) doc["results"].push_back(to_json(r));
  const auto write_start = std::chrono::steady_clock::now();
  write_document_atomic(path_, doc.dump() + "\n");
  write_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  return annotated;
}
nlohmann::ordered_json RunDocument::harness(const std::vector<ResultRow>& rows) const {
  double timed_ns = 0;
  for (std::size_t i = resumed_; i < rows.size(); ++i)
    for (auto s : rows[i].samples_ns) timed_ns += static_cast<double>(s);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  nlohmann::ordered_json phases = runner_.phases_json();
  phases["write"] = write_s_;  // the checkpoints written before this one
  return {{"wall_s", wall_s},
          {"timed_kernel_s", timed_ns * 1e-9},
          {"builds", env_.builds_done()},
          {"compile_workers", runner_.compile_workers_json()},
          {"metrics", runner_.metrics_json()},
          {"configurations", rows.size() - resumed_},
          {"phases_s", phases}};
}
}  // namespace kperf
