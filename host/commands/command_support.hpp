// What the subcommands share in reading their options: where kernels live, the user apps, the
// output paths, the device and its binary cache, interrupts.
#pragma once

#include <cxxopts.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
#include "kernel_root.hpp"

namespace kperf {

// --kernel-dir or the default beside the binary, checked by check_kernel_root.
std::string kernel_root_option(const cxxopts::ParseResult &args);
// The built-in apps (manifests from the kernel root), then the user apps of --app-file and
// --app-dir, which it returns. Bad app files throw std::invalid_argument (one line, exit 2).
std::vector<const AppDescriptor *> load_apps(const cxxopts::ParseResult &args,
                                             const std::string &kernel_root);
// Throws UsageError when `root` lacks kernels/ or schemes/.
void check_kernel_root(const std::string &root);
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
// --help was given: its text is printed, and the command ends with status 0 (main()).
struct HelpShown {};
// Parses argv; prints the help and throws HelpShown for --help; throws UsageError for a stray
// positional argument.
cxxopts::ParseResult parse_command(cxxopts::Options options, int argc, char **argv);

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

// SIGINT and SIGTERM set interrupt_requested(): the runner stops after the
// configuration in flight and the command writes what finished.
void catch_interrupts();

// The line a command prints when `rows` rows (or chains) are reference_failed: their truth is
// non-finite on a finite input (SPEC 15). The command then exits with kExitFaulted.
void report_broken_truths(std::size_t rows);

}  // namespace kperf
