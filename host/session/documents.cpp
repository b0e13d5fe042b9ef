// What every document a command writes carries: the context (provenance: the device, the build,
// every source file the run built), the fingerprint a --resume is held to, the document a
// --resume continues, and the record of an error that ended a run early.
#include "documents.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include "gzip.hpp"
#include "io.hpp"
#include "kernel_root.hpp"
#include "kperf_git_sha.h"  // generated at build time
#include "program_sources.hpp"
#include "results.hpp"
#include "sha256.hpp"
#include "strings.hpp"

namespace kperf {

namespace fs = std::filesystem;

std::string iso_time_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::ordered_json binary_cache_json(const ClEnv &env, const std::string &dir) {
  if (dir.empty()) return false;
  return {{"dir", dir}, {"hits", env.binary_cache_hits()}, {"stores", env.binary_cache_stores()}};
}

namespace {

// The sources and builds of the rows a --resume keeps, which earlier processes built.
std::map<std::string, std::string> &resumed_sources() {
  static std::map<std::string, std::string> sources;
  return sources;
}
std::set<std::pair<std::string, std::string>> &resumed_builds() {
  static std::set<std::pair<std::string, std::string>> builds;
  return builds;
}

// A file's name in context.sources: its path under the kernel root (kernels/..., schemes/...),
// else under the working directory, else absolute.
std::string source_key(const fs::path &file, const fs::path &kernel_root) {
  for (const fs::path &base : {kernel_root, fs::current_path()}) {
    const fs::path rel = file.lexically_relative(base);
    if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  }
  return file.generic_string();
}

// A program's top-level text is a file read whole: an app's kernel file, kernels/copy.cl, ...
// By the SHA-256 of its contents, the name context.sources gives each such file.
std::map<std::string, std::string> top_level_files(const fs::path &root) {
  std::map<std::string, std::string> out;
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(root / "kernels", ec))
    if (e.is_regular_file()) candidates.push_back(e.path());
  for (const AppDescriptor &app : app_registry())
    if (app.user()) candidates.push_back(fs::absolute(app.kernel_file).lexically_normal());
  for (const fs::path &f : candidates)
    out.emplace(sha256_hex(read_file(f.string())), source_key(f, root));
  return out;
}

// A program's name in context.sources: its file's, or "text:<SHA-256>" for a text no file holds
// (a fused chain's, which the host writes: measure/fused_program.cpp).
std::string program_name(const ProgramSources &p, const std::map<std::string, std::string> &files) {
  const auto top = files.find(p.source_sha256);
  return top != files.end() ? top->second : "text:" + p.source_sha256;
}

// Build options as context.builds names them: each -I folder as context.sources names files
// (schemes, not /home/me/kperf/build/schemes), so that two checkouts of one tree that built the
// same programs list the same builds. The rest stays as the compiler got it.
std::string portable_options(const std::string &options, const fs::path &root) {
  std::string out;
  bool folder_next = false;
  std::size_t at = 0;
  while (at < options.size()) {
    const std::size_t start = options.find_first_not_of(" \t\n", at);
    out.append(options, at, start == std::string::npos ? std::string::npos : start - at);
    if (start == std::string::npos) break;
    at = std::min(options.find_first_of(" \t\n", start), options.size());
    std::string word = options.substr(start, at - start);
    const bool joined = !folder_next && word.size() > 2 && word.rfind("-I", 0) == 0;
    if (folder_next || joined) {
      const std::string folder = joined ? word.substr(2) : word;
      word = (joined ? "-I" : "") + source_key(fs::absolute(folder).lexically_normal(), root);
    }
    folder_next = word == "-I";
    out += word;
  }
  return out;
}

}  // namespace

BuiltPrograms built_programs(const std::string &kernel_root) {
  const fs::path root = fs::absolute(kernel_root).lexically_normal();
  const std::map<std::string, std::string> files = top_level_files(root);
  BuiltPrograms out{resumed_sources(), resumed_builds()};
  for (const ProgramSources &p : recorded_program_sources()) {
    const std::string name = program_name(p, files);
    out.sources[name] = p.source_sha256;
    for (const auto &[path, sha] : p.includes) out.sources[source_key(path, root)] = sha;
    out.builds.emplace(name, portable_options(p.options, root));
  }
  return out;
}

std::map<std::string, std::string> built_sources(const std::string &kernel_root) {
  return built_programs(kernel_root).sources;
}

void add_sources(nlohmann::ordered_json &ctx, const std::map<std::string, std::string> &sources) {
  ctx["sources"] = nlohmann::ordered_json::object();
  for (const auto &[path, sha] : sources) ctx["sources"][path] = sha;
  ctx["sources_sha256"] = sources_sha256(sources);
}

void add_builds(nlohmann::ordered_json &ctx, const std::map<std::string, std::string> &sources,
                const std::set<std::pair<std::string, std::string>> &builds) {
  ctx["builds"] = nlohmann::ordered_json::array();
  for (const auto &[source, options] : builds)
    ctx["builds"].push_back({{"source", source}, {"options", options}});
  ctx["builds_sha256"] = builds_sha256(sources, builds);
}

std::set<std::pair<std::string, std::string>> builds_of(const nlohmann::json &ctx) {
  std::set<std::pair<std::string, std::string>> builds;
  for (const auto &b : ctx.at("builds"))
    builds.emplace(b.at("source").get<std::string>(), b.at("options").get<std::string>());
  return builds;
}

nlohmann::ordered_json base_context(const std::string &command_line, const ClEnv &env,
                                    const std::string &kernel_root) {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  nlohmann::ordered_json ctx;
  ctx["date"] = iso_time_utc();
  ctx["host"] = host;
  ctx["kperf_version"] = KPERF_VERSION;
  ctx["git_sha"] = KPERF_GIT_SHA;
  ctx["build_type"] = KPERF_BUILD_TYPE;
  ctx["command_line"] = command_line;
  ctx["device"] = to_json(env.info());
  nlohmann::ordered_json user_apps = nlohmann::ordered_json::array();
  for (const AppDescriptor &app : app_registry())
    if (app.user()) {
      nlohmann::ordered_json a = {{"name", app.name},
                                  {"file", app.kernel_file},
                                  {"radius", app.radius},
                                  {"metric", metric_name(app.primary_metric)},
                                  {"summary", app.summary}};
      if (app.output_range) a["range"] = {app.output_range->first, app.output_range->second};
      user_apps.push_back(std::move(a));
    }
  if (!user_apps.empty()) ctx["user_apps"] = std::move(user_apps);
  const BuiltPrograms built = built_programs(kernel_root);
  add_sources(ctx, built.sources);
  add_builds(ctx, built.sources, built.builds);
  return ctx;
}

nlohmann::ordered_json make_fingerprint(const ClEnv &env, const std::string &kernel_root,
                                        nlohmann::ordered_json options) {
  const DeviceInfo &d = env.info();
  const std::string kernels = fnv1a_hex(kernel_sources_salt(kernel_root));
  nlohmann::ordered_json fingerprint = {{"device",
                                         {{"name", d.name},
                                          {"vendor", d.vendor},
                                          {"driver_version", d.driver_version},
                                          {"device_version", d.device_version},
                                          {"platform_version", d.platform_version}}},
                                        {"kperf_version", KPERF_VERSION},
                                        {"kernels", kernels},
                                        {"options", std::move(options)}};
  // A user app's source: a resumed file must not mix rows of two versions of the kernel.
  for (const AppDescriptor &app : app_registry())
    if (app.user()) fingerprint["user_apps"][app.name] = fnv1a_hex(read_file(app.kernel_file));
  return fingerprint;
}

std::vector<std::string> fingerprint_differences(const nlohmann::json &a, const nlohmann::json &b) {
  std::vector<std::string> out;
  std::function<void(const nlohmann::json &, const nlohmann::json &, const std::string &)> walk =
      [&](const nlohmann::json &x, const nlohmann::json &y, const std::string &at) {
        if (x.is_object() && y.is_object()) {
          std::vector<std::string> keys;
          for (const auto &[k, v] : x.items()) keys.push_back(k);
          for (const auto &[k, v] : y.items())
            if (!x.contains(k)) keys.push_back(k);
          for (const auto &k : keys)
            walk(x.contains(k) ? x.at(k) : nlohmann::json(),
                 y.contains(k) ? y.at(k) : nlohmann::json(), at.empty() ? k : at + "." + k);
          return;
        }
        if (x != y) out.push_back(at);
      };
  walk(a, b, "");
  return out;
}

nlohmann::json read_resumable(const std::string &path, const std::string &kind,
                              const nlohmann::ordered_json &fingerprint) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_document(path));
  } catch (const nlohmann::json::exception &e) {
    throw UsageError("--resume: " + path + " is not a kperf document (" + e.what() + ")");
  }
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array() ||
      !doc.contains("context") || !doc["context"].is_object())
    throw UsageError("--resume: " + path + " is not a kperf document (no context and results)");
  // Run documents before the "kind" field have none; tune documents always had it.
  const std::string found = doc.value("kind", std::string("run"));
  if (found != kind)
    throw UsageError("--resume: " + path + " is a kperf " + found + " document; kperf " + kind +
                     " --resume continues " + kind + " documents (choose another --out)");
  if (!doc["context"].contains("fingerprint"))
    throw UsageError("--resume: " + path +
                     " has no fingerprint (written by a kperf before 0.2): its rows cannot be "
                     "shown to match this run's settings; choose another --out");
  const auto differ = fingerprint_differences(doc["context"]["fingerprint"], fingerprint);
  if (!differ.empty()) {
    std::string list;
    for (const auto &d : differ) list += (list.empty() ? "" : ", ") + d;
    throw UsageError("--resume: " + path + " was measured under other settings (" + list +
                     "); resume with the same ones or choose another --out");
  }
  // Its rows were built from these files (the same contents: the fingerprint holds them).
  if (doc["context"].contains("sources") && doc["context"]["sources"].is_object())
    for (const auto &[file, sha] : doc["context"]["sources"].items())
      if (sha.is_string()) resumed_sources()[file] = sha.get<std::string>();
  try {
    if (doc["context"].contains("builds")) resumed_builds() = builds_of(doc["context"]);
  } catch (const nlohmann::json::exception &) {
    throw UsageError("--resume: " + path + ": context.builds is not a list of {source, options}");
  }
  return doc;
}

nlohmann::ordered_json error_json(const std::exception &e) {
  const char *kind = dynamic_cast<const std::bad_alloc *>(&e) ? "host_memory"
                     : dynamic_cast<const InputError *>(&e)   ? "input"
                     : dynamic_cast<const cl::Error *>(&e)    ? "device"
                     : dynamic_cast<const UsageError *>(&e)   ? "usage"
                                                              : "host";
  std::string message = e.what();
  if (const auto *cl = dynamic_cast<const cl::Error *>(&e)) message = describe(*cl);
  return {{"kind", kind}, {"message", message}};
}

void rethrow_with_note(const std::exception &e, const std::string &note) {
  if (dynamic_cast<const UsageError *>(&e)) throw UsageError(e.what() + note);
  if (dynamic_cast<const InputError *>(&e)) throw InputError(e.what() + note);
  if (const auto *cl = dynamic_cast<const cl::Error *>(&e))
    throw std::runtime_error("OpenCL error: " + describe(*cl) + note);
  throw std::runtime_error(e.what() + note);
}

}  // namespace kperf
