// The manifest of an app kernel: the lines of its first comment block that tell the host what it
// needs (name, halo radius, primary metric...), so that an app is one .cl file (docs/user-apps.md).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace kperf {

struct AppManifest {
  std::string name;
  int radius = 0;
  std::string metric = "mre";                      // mre or me
  std::optional<std::pair<double, double>> range;  // declared output range [lo, hi]
  std::string summary;
  bool accurate_uses_tile = true;  // "@accurate global": the accurate kernel reads global memory
};

// Parses the manifest of `source`, the text of the file `path` (named in errors). Throws
// std::invalid_argument with one line naming the file and the problem: no manifest, a missing
// name or radius, an unknown or repeated key, a bad value, a radius outside 0..8 or different
// from the kernel's #define RADIUS.
AppManifest parse_app_manifest(const std::string& source, const std::string& path);

// Reads and parses `path`; a file that does not exist or cannot be read throws likewise.
std::pair<AppManifest, std::string> read_app_file(const std::string& path);

}  // namespace kperf
