// `kperf check`: runs app_check.hpp's proofs for each app and prints the pass/fail table.
#include "check_command.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cxxopts.hpp>
#include <map>

#include "app_check.hpp"
#include "cli.hpp"
#include "command_support.hpp"
#include "fault_journal.hpp"
#include "strings.hpp"

namespace kperf {

namespace {

// Values 0..255 from a fixed seed: every run checks the same input.
Grid check_input(int width, int height) {
  Grid g(width, height);
  std::uint64_t s = 0x9E3779B97F4A7C15ULL;
  for (float& v : g.data) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v = 255.0f * static_cast<float>((s >> 11) * 0x1.0p-53);
  }
  return g;
}

cxxopts::Options check_options() {
  cxxopts::Options options(
      "kperf check",
      "Prove apps perforation-safe: skipped elements never reach the "
      "outputs, and load paths, host/device perforation, fused/shared/separate "
      "output fills and repeated launches agree");
  // clang-format off
  options.add_options()
    ("apps", "built-in apps to check as well (a list, or all)", cxxopts::value<std::string>())
    ("checks", "the checks to run, a list of model, range, reproducible, poison, load-paths, host-device, output-fills (default: all)", cxxopts::value<std::string>())
    ("size", "the check input's size, N or WxH; at least 3 work-groups each way", cxxopts::value<std::string>()->default_value("96x40"))
    ("bilateral-sigmas", "bilateral's sigma_color,sigma_space", cxxopts::value<std::string>()->default_value("25,2"));
  // clang-format on
  add_common_options(options);
  return options;
}

// --checks: names from check_names(), each at most once (empty: every check).
std::vector<std::string> parse_checks(const cxxopts::ParseResult& args) {
  std::vector<std::string> checks;
  if (!args.count("checks")) return checks;
  const std::string text = args["checks"].as<std::string>();
  const auto& known = check_names();
  for (const std::string& name : split_list(text)) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      throw UsageError("--checks " + text + ": unknown check '" + name + "' (one of " + names +
                       ")");
    }
    if (std::find(checks.begin(), checks.end(), name) != checks.end())
      throw UsageError("--checks " + text + ": '" + name + "' twice");
    checks.push_back(name);
  }
  return checks;
}

}  // namespace

int cmd_check(int argc, char** argv) {
  const cxxopts::ParseResult args = parse_command(check_options(), argc, argv);
  OutputRunOptions run_options;
  run_options.kernel_root = kernel_root_option(args);
  std::vector<const AppDescriptor*> apps = load_apps(args, run_options.kernel_root);
  if (args.count("apps"))
    for (const AppDescriptor* app : parse_apps(args["apps"].as<std::string>())) apps.push_back(app);
  if (apps.empty()) throw UsageError("kperf check needs --app-file, --app-dir or --apps");
  for (const AppDescriptor* app : apps)
    if (!app->takes_images())
      throw UsageError("kperf check takes image apps; " + app->name + " has inputs of its own");
  const auto [width, height] = parse_size(args["size"].as<std::string>());
  if (width < 48 || height < 32)
    throw UsageError("--size " + args["size"].as<std::string>() +
                     ": at least 48x32, so that every scheme has interior work-groups");
  run_options.params = parse_bilateral_sigmas(args["bilateral-sigmas"].as<std::string>());
  if (args.count("cl-options"))
    run_options.extra_build_options = args["cl-options"].as<std::string>();
  const std::vector<std::string> checks = parse_checks(args);

  ClEnv env(choose_device_entry(args["device"].as<std::string>()));
  const std::string binary_cache = binary_cache_dir(args, env.info());
  if (!binary_cache.empty()) enable_binary_cache(env, binary_cache, run_options.kernel_root);
  std::printf("kperf check on %s (%s), %dx%d input\n", env.info().name.c_str(),
              env.info().platform_name.c_str(), width, height);
  const Grid input = check_input(width, height);
  bool all_pass = true;
  for (const AppDescriptor* app : apps) {
    std::vector<CheckResult> results;
    try {
      results = check_app(env, *app, input, run_options, checks);
    } catch (const DeviceLost& e) {
      // Under a supervisor the next process checks again, the faulting configuration a failed
      // check; alone, the check ends here.
      if (supervised()) exit_for_restart();
      std::printf("%-16s %-40s %-6s %s\n", "device", app->name.c_str(), "FAIL", e.what());
      std::printf("%s: NOT perforation-safe: a configuration faulted the device\n",
                  app->name.c_str());
      return 1;
    }
    std::printf("\n%-16s %-40s %-6s %s\n", "check", app->name.c_str(), "result", "detail");
    std::map<std::string, int> failed_by_check;
    int failed = 0;
    for (const CheckResult& r : results) {
      std::printf("%-16s %-40s %-6s %s\n", r.check.c_str(), r.config.c_str(),
                  r.pass ? "pass" : "FAIL", r.detail.c_str());
      if (!r.pass) ++failed, ++failed_by_check[r.check];
    }
    if (failed == 0) {
      std::printf("%s: perforation-safe (%zu checks passed)\n", app->name.c_str(), results.size());
      continue;
    }
    all_pass = false;
    std::string which;
    for (const auto& [check, n] : failed_by_check)
      which += (which.empty() ? "" : ", ") + check + " " + std::to_string(n);
    std::printf("%s: NOT perforation-safe: %d of %zu checks failed (%s)\n", app->name.c_str(),
                failed, results.size(), which.c_str());
  }
  if (!journal_stop().empty()) {
    std::printf("kperf check stopped: %s\n", journal_stop().c_str());
    return 1;
  }
  return all_pass ? 0 : 1;
}

}  // namespace kperf
