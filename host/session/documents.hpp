// What every document a command writes carries: the context (provenance: the device, the build,
// every source file the run built), the fingerprint a --resume is held to, the document a
// --resume continues, and the record of an error that ended a run early.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cl_env.hpp"

namespace kperf {

// A bad command line or input: one line on stderr, no output written (exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string iso_time_utc();
// The context's "binary_cache": its directory with this process's hits and stores, or false.
nlohmann::ordered_json binary_cache_json(const ClEnv &env, const std::string &dir);

// date, host, version, git sha, build type, command line, device, and the sources and builds of
// the programs the run built (add_sources and add_builds of built_programs).
nlohmann::ordered_json base_context(const std::string &command_line, const ClEnv &env,
                                    const std::string &kernel_root);
// What the programs of this command built (every process of it: program_sources.hpp), and those
// of the rows a --resume kept.
struct BuiltPrograms {
  // Every file read, by path -> SHA-256 of its contents. A path is relative to the kernel root
  // (kernels/gaussian3.cl, schemes/kperf_tile.cl), else to the working directory (a user app),
  // else absolute; a program's text that no file holds (a fused chain's) is "text:<SHA-256>".
  std::map<std::string, std::string> sources;
  // Every program: its text named as in `sources`, and its options as the compiler got them (the
  // device's defines included), each -I folder named as `sources` names files.
  std::set<std::pair<std::string, std::string>> builds;
};
BuiltPrograms built_programs(const std::string &kernel_root);
std::map<std::string, std::string> built_sources(const std::string &kernel_root);  // its sources
// The context's "sources" (path -> SHA-256) and "sources_sha256" (sources_sha256() of them).
void add_sources(nlohmann::ordered_json &ctx, const std::map<std::string, std::string> &sources);
// The context's "builds" ({source, options} in the set's order) and "builds_sha256"
// (builds_sha256() of `sources` and them).
void add_builds(nlohmann::ordered_json &ctx, const std::map<std::string, std::string> &sources,
                const std::set<std::pair<std::string, std::string>> &builds);
// A document context's "builds" as a set; throws nlohmann::json::exception when malformed.
std::set<std::pair<std::string, std::string>> builds_of(const nlohmann::json &ctx);

// What a document's rows were measured under beyond their keys: the device, its driver and
// platform, kperf's version, the kernel sources (a hash of every kernel and scheme file) and
// `options` (every option that changes what a row measures). A --resume that would add rows
// measured under another fingerprint is refused: the lists a key already names (apps, schemes,
// every axis, launch shapes, inputs, sizes) may grow, nothing else may change.
nlohmann::ordered_json make_fingerprint(const ClEnv &env, const std::string &kernel_root,
                                        nlohmann::ordered_json options);
// The dotted names of the fields that differ between two fingerprints (absent counts as differing).
std::vector<std::string> fingerprint_differences(const nlohmann::json &a, const nlohmann::json &b);
// The document at `path` that `command` (kperf run / kperf tune) may --resume: a kperf document
// of its `kind` ("run" or "tune") whose fingerprint equals `fingerprint`. Anything else is a
// UsageError naming the problem (what differs), and the file is left as it is.
nlohmann::json read_resumable(const std::string &path, const std::string &kind,
                              const nlohmann::ordered_json &fingerprint);
// The context's record of an error that ended a run early: its message and what kind it was.
nlohmann::ordered_json error_json(const std::exception &e);
// Throws `e` again with `note` after its message, keeping what decides the exit status (usage and
// input errors stay exit 2, the rest exit 1).
[[noreturn]] void rethrow_with_note(const std::exception &e, const std::string &note);

}  // namespace kperf
