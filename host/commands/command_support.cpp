// What the subcommands share: kernel location, device choice, binary cache,
// JSON context.
#include "command_support.hpp"

#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>

#include "gzip.hpp"
#include "io.hpp"
#include "kernel_root.hpp"
#include "kperf_git_sha.h"  // generated at build time
#include "program_sources.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "sha256.hpp"
#include "strings.hpp"

namespace kperf {

namespace fs = std::filesystem;

std::string kernel_root_option(const cxxopts::ParseResult &args) {
  const std::string root = args.count("kernel-dir") ? args["kernel-dir"].as<std::string>()
                                                    : default_kernel_root().string();
  check_kernel_root(root);
  return root;
}

std::vector<const AppDescriptor *> load_apps(const cxxopts::ParseResult &args,
                                             const std::string &kernel_root) {
  load_builtin_apps(kernel_root);
  std::vector<const AppDescriptor *> user;
  if (args.count("app-file"))
    for (const std::string &path : args["app-file"].as<std::vector<std::string>>())
      user.push_back(&add_user_app(path));
  if (args.count("app-dir"))
    for (const AppDescriptor *app : add_user_app_dir(args["app-dir"].as<std::string>()))
      user.push_back(app);
  return user;
}

void check_kernel_root(const std::string &root) {
  for (const char *sub : {"kernels", "schemes"})
    if (!fs::is_directory(fs::path(root) / sub))
      throw UsageError("kernel directory " + root + " has no " + sub +
                       "/ folder (set --kernel-dir to a directory holding "
                       "kernels/ and schemes/)");
}

std::string out_path_or_default(const cxxopts::ParseResult &args, const std::string &prefix,
                                const std::string &device_name) {
  if (args.count("out")) {
    const std::string path = args["out"].as<std::string>();
    require_writable(path);
    return path;
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string path =
      prefix + "-" + slug(device_name) + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count()) + ".json";
  require_writable(path);
  return path;
}

std::string slug(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    else if (!out.empty() && out.back() != '-')
      out.push_back('-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.substr(0, 48);
}

void require_writable(const std::string &path) {
  try {
    check_writable(path);
  } catch (const std::runtime_error &e) {
    throw UsageError(std::string("cannot write results: ") + e.what());
  }
}

void require_writable_dir(const std::string &option, const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
    throw UsageError(option + " " + dir + ": cannot create or write directory");
}

void add_common_options(cxxopts::Options &options) {
  // clang-format off
  options.add_options()
    ("device", "P:D or a device-name substring (default: first GPU, else first device)", cxxopts::value<std::string>()->default_value(""))
    ("binary-cache", "keep compiled program binaries in DIR (keyed by the contents of every kernel and scheme file, the options, device and driver); later runs load them instead of compiling. Default on GPUs: ~/.cache/kperf/binaries ($KPERF_CACHE_DIR or $XDG_CACHE_HOME/kperf if set); none: off", cxxopts::value<std::string>())
    ("cl-options", "extra OpenCL build options for every kernel (e.g. -DKPERF_MATERIALIZE_ROWS=1); recorded in the context", cxxopts::value<std::string>())
    ("kernel-dir", "directory holding kernels/ and schemes/ (default: beside the binary)", cxxopts::value<std::string>())
    ("app-file", "a user app: one .cl file with a manifest (docs/user-apps.md); repeatable. Without --apps, only the user apps run", cxxopts::value<std::vector<std::string>>())
    ("app-dir", "every .cl file of DIR as a user app", cxxopts::value<std::string>())
    ("quiet", "no progress bar")
    ("h,help", "show this help");
  // clang-format on
}

cxxopts::ParseResult parse_command(cxxopts::Options options, int argc, char **argv) {
  cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    throw HelpShown{};
  }
  if (!args.unmatched().empty())
    throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  return args;
}

DeviceEntry choose_device_entry(const std::string &selector) {
  auto entries = enumerate_devices();
  std::vector<DeviceInfo> infos;
  for (const auto &e : entries) infos.push_back(e.info);
  return entries[choose_device(infos, parse_device_selector(selector))];
}

void enable_binary_cache(ClEnv &env, const std::string &dir, const std::string &kernel_root) {
  require_writable_dir("--binary-cache", dir);
  env.enable_binary_cache(dir, kernel_sources_salt(kernel_root));
}

std::string binary_cache_dir(const cxxopts::ParseResult &args, const DeviceInfo &device) {
  const char *env = std::getenv("KPERF_BINARY_CACHE");
  const std::string asked = args.count("binary-cache") ? args["binary-cache"].as<std::string>()
                            : env                      ? std::string(env)
                                                       : std::string();
  if (asked == "none") return "";
  if (!asked.empty()) return asked;
  const fs::path root = user_cache_dir();
  // A GPU alone: Oclgrind, a simulator, calls itself a CPU as well as a GPU.
  if (!device.is_gpu() || device.is_cpu() || root.empty()) return "";
  std::error_code ec;
  fs::create_directories(root / "binaries", ec);
  return ec ? std::string() : (root / "binaries").string();  // unwritable: no cache, no error
}

std::string persistent_jit_cache_dir(int argc, char **argv) {
  const char *env = std::getenv("KPERF_BINARY_CACHE");
  if (env && std::string(env) == "none") return "";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const char *own : {"--kernel-dir", "--app-file", "--app-dir"})
      if (arg == own || arg.rfind(std::string(own) + "=", 0) == 0) return "";
    if (arg == "--binary-cache=none" ||
        (arg == "--binary-cache" && i + 1 < argc && std::string(argv[i + 1]) == "none"))
      return "";
  }
  const fs::path root = user_cache_dir();
  if (root.empty()) return "";
  std::string salt;
  try {
    salt = kernel_sources_salt(default_kernel_root().string());
  } catch (const std::exception &) {
    return "";  // no kernels beside the binary: the command reports that itself
  }
  return (root / ("nvidia-jit-" + fnv1a_hex(salt))).string();
}

namespace {
void on_signal(int) { interrupt_requested() = true; }
}  // namespace

void catch_interrupts() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

void report_broken_truths(std::size_t rows) {
  std::fprintf(stderr,
               "kperf: %zu row%s not measured: the truth is non-finite on a finite input "
               "(reference_failed rows; the count is in each reason)\n",
               rows, rows == 1 ? "" : "s");
}

}  // namespace kperf
