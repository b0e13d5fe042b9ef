// The default grid of `kperf run` (default_size.hpp).
#include "default_size.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cache_probe.hpp"
#include "compile_workers.hpp"
#include "gzip.hpp"
#include "io.hpp"

namespace fs = std::filesystem;

namespace kperf {

namespace {

std::string size_text(std::pair<int, int> s) {
  return std::to_string(s.first) + "x" + std::to_string(s.second);
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
  return text;
}

// The choice a measuring process of this run made before (the supervisor's scratch directory is
// every child's), so that a restarted child measures the same grids.
fs::path scratch_choice() { return fs::path(scratch_dir()) / "default-size.json"; }

DefaultSize from_json(const nlohmann::json& block) {
  DefaultSize d;
  d.json = nlohmann::ordered_json::parse(block.dump());
  d.line = block.value("reason", std::string());
  const auto& s = block.at("size");
  if (s.is_array()) d.size = std::make_pair(s.at(0).get<int>(), s.at(1).get<int>());
  return d;
}

DefaultSize probed(ClEnv& env, const std::string& kernel_root, std::pair<int, int> own) {
  const CacheProbe& probe = command_cache_probe(env, kernel_root);
  DefaultSize d;
  const std::string here = size_text(own);
  if (!probe.cache_bytes) {
    d.line = "size: " + here + ", the default photo's own: no last-level cache measured on this " +
             "GPU (" + probe.problem + "); --size chooses";
  } else if (const auto side = memory_bound_side(*probe.cache_bytes, env.info().global_mem_size,
                                                 std::max(own.first, own.second))) {
    d.size = std::make_pair(*side, *side);
    d.line = "size: " + size_text(*d.size) + ", because this GPU's last-level cache (measured: " +
             mib(static_cast<double>(*probe.cache_bytes)) + ") holds a " + here +
             " grid, whose kernels would time the cache, not memory; " + size_text(*d.size) +
             " is the smallest of 2048, 4096, 8192 and 16384 whose input (" +
             mib(4.0 * *side * *side) + ") is larger. --size chooses";
  } else {
    d.line = "size: " + here +
             ", the default photo's own: this GPU's last-level cache (measured: " +
             mib(static_cast<double>(*probe.cache_bytes)) + ") does not hold its input and " +
             "output; --size chooses";
  }
  d.json = {{"size", d.size ? nlohmann::ordered_json({d.size->first, d.size->second})
                            : nlohmann::ordered_json(nullptr)},
            {"reason", d.line},
            {"cache_probe", probe.to_json()}};
  return d;
}

}  // namespace

DefaultSize choose_default_size(ClEnv& env, const std::string& kernel_root, bool sizes_given,
                                const std::string& given_text, bool input_given, bool dry_run,
                                std::pair<int, int> own, const nlohmann::json& earlier) {
  DefaultSize d;
  if (sizes_given) {
    d.line = "size: " + given_text;
    return d;
  }
  if (input_given) {
    d.line = "size: each input's own (--size resizes)";
    return d;
  }
  if (!env.info().is_gpu() || dry_run) {
    d.line = "size: " + size_text(own) + ", the default photo's own (the HPCS'19 size for " +
             "mobile GPUs; " +
             (dry_run ? "a dry run probes no cache" : "only a GPU's cache is probed") +
             "); --size chooses";
    return d;
  }
  if (earlier.is_object() && earlier.contains("size")) return from_json(earlier);
  if (fs::exists(scratch_choice()))
    return from_json(nlohmann::json::parse(read_file(scratch_choice().string())));
  d = probed(env, kernel_root, own);
  std::ofstream(scratch_choice()) << d.json.dump() << "\n";
  return d;
}

DefaultSize default_run_size(ClEnv& env, RunConfig& cfg, std::vector<std::pair<int, int>>& sizes,
                             const std::string& given_text, bool input_given, bool dry_run,
                             const std::string& resumed, std::pair<int, int>& largest) {
  const bool sizes_given = !sizes.empty();
  nlohmann::json earlier;
  if (!resumed.empty() && fs::exists(resumed)) {
    try {
      const auto doc = nlohmann::json::parse(read_document(resumed));
      earlier = doc.at("context").value("default_size", nlohmann::json());
    } catch (const std::exception&) {
      // An unreadable file is refused by --resume itself, with its reason.
    }
  }
  DefaultSize d = choose_default_size(env, cfg.kernel_root, sizes_given, given_text, input_given,
                                      dry_run, largest, earlier);
  const std::pair<int, int> own = largest;  // the default input's own size
  if (d.size) {
    sizes = cfg.sizes = {*d.size};
    largest = *d.size;
    // Rodinia's explicit step, whose factor grows with the grid's cells, diverges well below
    // 2048^2: the apps with their own inputs keep the photo's size.
    if (std::any_of(cfg.apps.begin(), cfg.apps.end(),
                    [](const AppDescriptor* a) { return !a->takes_images(); })) {
      cfg.own_input_size = own;
      const std::string note = " (hotspot stays at " + std::to_string(own.first) + "x" +
                               std::to_string(own.second) +
                               ": Rodinia's explicit step diverges on larger grids)";
      if (d.line.find(note) == std::string::npos) d.line += note;
      d.json["reason"] = d.line;
      d.json["own_input_size"] = {own.first, own.second};
    }
  }
  cfg.default_size = d.json;
  return d;
}

}  // namespace kperf
