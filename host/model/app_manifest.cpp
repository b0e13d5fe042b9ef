// Parses the manifest in an app kernel's first comment block (syntax: docs/user-apps.md).
#include "app_manifest.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kperf {
namespace {

constexpr int kMaxRadius = 8;  // the tile contract's vector rows hold halos up to 8

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno == 0 && std::isfinite(out);
}

// The `#define RADIUS N` of the kernel source, or -1 where it has none.
int defined_radius(const std::string& source) {
  static const std::regex define(R"(^[ \t]*#[ \t]*define[ \t]+RADIUS[ \t]+\(?([0-9]+)\)?)",
                                 std::regex::multiline);
  std::smatch m;
  if (!std::regex_search(source, m, define)) return -1;
  return std::atoi(m[1].str().c_str());
}

}  // namespace

AppManifest parse_app_manifest(const std::string& source, const std::string& path) {
  auto fail = [&](const std::string& problem) {
    throw std::invalid_argument("app file " + path + ": " + problem);
  };
  AppManifest m;
  std::set<std::string> seen;
  std::istringstream lines(source);
  std::string line;
  // The first comment block: leading lines that are blank or start with //.
  while (std::getline(lines, line)) {
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t.rfind("//", 0) != 0) break;
    const std::string body = trim(t.substr(2));
    if (body.empty() || body[0] != '@') continue;
    const auto space = body.find_first_of(" \t");
    const std::string key =
        body.substr(1, space == std::string::npos ? std::string::npos : space - 1);
    const std::string value = space == std::string::npos ? "" : trim(body.substr(space));
    if (!seen.insert(key).second) fail("@" + key + " is given twice");
    if (key == "name") {
      static const std::regex valid("[A-Za-z][A-Za-z0-9_]{0,47}");
      if (!std::regex_match(value, valid))
        fail("@name '" + value + "' must be a letter then letters, digits or _ (at most 48)");
      m.name = value;
    } else if (key == "radius") {
      double r = 0;
      if (!parse_number(value, r) || r != std::floor(r) || r < 0 || r > kMaxRadius)
        fail("@radius '" + value + "' must be an integer in 0.." + std::to_string(kMaxRadius));
      m.radius = static_cast<int>(r);
    } else if (key == "metric") {
      if (value != "mre" && value != "me") fail("@metric '" + value + "' must be mre or me");
      m.metric = value;
    } else if (key == "range") {
      std::istringstream parts(value);
      std::string lo, hi, extra;
      double a = 0, b = 0;
      parts >> lo >> hi >> extra;
      if (!extra.empty() || !parse_number(lo, a) || !parse_number(hi, b) || !(a < b))
        fail("@range '" + value + "' must be two numbers LO HI with LO < HI");
      m.range = std::make_pair(a, b);
    } else if (key == "summary") {
      m.summary = value;
    } else if (key == "accurate") {
      if (value != "tile" && value != "global")
        fail("@accurate '" + value + "' must be tile or global");
      m.accurate_uses_tile = value == "tile";
    } else {
      fail("unknown manifest key @" + key +
           " (valid: @name, @radius, @metric, @range, @summary, @accurate)");
    }
  }
  if (seen.empty())
    fail("no manifest (its first comment lines must declare at least @name and @radius)");
  if (!seen.count("name")) fail("the manifest has no @name");
  if (!seen.count("radius")) fail("the manifest has no @radius");
  const int defined = defined_radius(source);
  if (defined < 0) fail("no '#define RADIUS N' before '#include \"kperf_tile.cl\"'");
  if (defined != m.radius)
    fail("@radius " + std::to_string(m.radius) + " differs from the kernel's #define RADIUS " +
         std::to_string(defined));
  return m;
}

std::pair<AppManifest, std::string> read_app_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("app file " + path + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::invalid_argument("app file " + path + ": cannot be read");
  std::string source = text.str();
  AppManifest manifest = parse_app_manifest(source, path);
  return {std::move(manifest), std::move(source)};
}

}  // namespace kperf
