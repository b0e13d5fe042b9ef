// What the subcommands share: exit codes, the usage error, where kernels live,
// the device and its binary cache opened from options, and the context block
// every JSON document carries.
#pragma once

#include <cxxopts.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "exit_codes.hpp"
#include "kernel_root.hpp"

namespace kperf {

// A bad command line or input: one line on stderr, no output written.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --kernel-dir or the default beside the binary, checked by check_kernel_root.
std::string kernel_root_option(const cxxopts::ParseResult &args);
// The built-in apps (manifests from the kernel root), then the user apps of --app-file and
// --app-dir, which it returns. Bad app files throw std::invalid_argument (one line, exit 2).
std::vector<const AppDescriptor *> load_apps(const cxxopts::ParseResult &args,
                                             const std::string &kernel_root);
// Throws UsageError when `root` lacks kernels/ or schemes/.
void check_kernel_root(const std::string &root);
std::string iso_time_utc();
// Lower-case alphanumerics and single dashes, at most 48 characters (for file
// names).
std::string slug(const std::string &text);
// --out when given, else PREFIX-<device>-<unix time>.json in the working directory, checked
// writable either way.
std::string out_path_or_default(const cxxopts::ParseResult &args, const std::string &prefix,
                                const std::string &device_name);
// Throws UsageError when `path` cannot be written.
void require_writable(const std::string &path);
// Creates `dir` if needed; throws UsageError naming `option` when it cannot be
// written.
void require_writable_dir(const std::string &option, const std::string &dir);

// The options every command that runs kernels takes: --device, --binary-cache, --cl-options,
// --kernel-dir, --quiet, --help.
void add_common_options(cxxopts::Options &options);
// Parses argv; prints the help and returns nullopt for --help; throws UsageError for a stray
// positional argument.
std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options &options, int argc, char **argv);

// The device chosen by `selector` (see `kperf run --help`).
DeviceEntry choose_device_entry(const std::string &selector);
// Turns on the program-binary cache in `dir`, keyed by the contents of every
// file under `kernel_root`'s kernels/ and schemes/ (an edited scheme misses).
void enable_binary_cache(ClEnv &env, const std::string &dir, const std::string &kernel_root);
// The binary cache a command uses: --binary-cache DIR, else the environment's
// KPERF_BINARY_CACHE (how the test suite shares one cache), else on a GPU kperf's user cache
// (user_cache_dir()/binaries), where a second run of the same space compiles nothing; "none" in
// either, or a CPU device (where PoCL's own cache serves), turns it off ("").
std::string binary_cache_dir(const cxxopts::ParseResult &args, const DeviceInfo &device);
// Where NVIDIA's JIT cache persists for this command line: user_cache_dir()/nvidia-jit-DIGEST,
// DIGEST a hash of every kernel and scheme file beside the binary, since the driver keys a build
// on its top-level source alone. Empty (a private cache for the run) when the binary cache is
// off, or when --kernel-dir, --app-file or --app-dir bring sources that the digest does not
// cover. Read from argv, before any OpenCL call.
std::string persistent_jit_cache_dir(int argc, char **argv);
// The context's "binary_cache": its directory with this process's hits and stores, or false.
nlohmann::ordered_json binary_cache_json(const ClEnv &env, const std::string &dir);

// SIGINT and SIGTERM set interrupt_requested(): the runner stops after the
// configuration in flight and the command writes what finished.
void catch_interrupts();

// The line a command prints when `rows` rows (or chains) are reference_failed: their truth is
// non-finite on a finite input (SPEC 15). The command then exits with kExitFaulted.
void report_broken_truths(std::size_t rows);

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
