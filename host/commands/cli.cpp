// Parsers for command-line values: lists, work-group sizes, grid sizes, counts.
#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "io.hpp"

namespace kperf {

namespace {

// Strict decimal integer in [lo, hi]; returns false for anything else.
bool parse_int(const std::string& s, long lo, long hi, long& out) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-') return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || v < lo || v > hi) return false;
  out = v;
  return true;
}

}  // namespace

WorkGroup parse_wg(const std::string& text) {
  const auto x = text.find('x');
  long wx = 0, wy = 0;
  if (x == std::string::npos || !parse_int(text.substr(0, x), 1, 65536, wx) ||
      !parse_int(text.substr(x + 1), 1, 65536, wy))
    throw std::invalid_argument("invalid work-group size '" + text +
                                "' (expected WXxWY with positive integers, e.g. 16x8, or auto)");
  return {static_cast<int>(wx), static_cast<int>(wy)};
}

std::vector<WorkGroup> parse_wg_list(const std::string& text) {
  std::vector<WorkGroup> out;
  for (const auto& item : split_list(text)) {
    const WorkGroup wg = parse_wg(item);
    bool seen = false;
    for (const auto& o : out) seen = seen || o == wg;
    if (!seen) out.push_back(wg);
  }
  return out;
}

std::vector<int> parse_vec_list(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    long v = 0;
    if (!parse_int(item, 1, 8, v) || (v != 1 && v != 2 && v != 4 && v != 8))
      throw std::invalid_argument("invalid --vec '" + item + "' (valid: 1, 2, 4, 8)");
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end())
      out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<int> parse_py_list(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    long v = 0;
    if (!parse_int(item, 1, 16, v))
      throw std::invalid_argument("invalid --py '" + item + "' (expected integers in 1..16)");
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end())
      out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<WorkGroup> with_outputs_per_item(const std::vector<WorkGroup>& wgs,
                                             const std::vector<int>& vecs,
                                             const std::vector<int>& pys) {
  std::vector<WorkGroup> out;
  for (const auto& wg : wgs)
    for (int v : vecs)
      for (int p : pys) out.push_back({wg.x, wg.y, v, p});
  return out;
}

std::pair<int, int> parse_size(const std::string& text) {
  long w = 0, h = 0;
  const auto x = text.find('x');
  const bool ok = x == std::string::npos ? parse_int(text, 1, 65536, w) && (h = w, true)
                                         : parse_int(text.substr(0, x), 1, 65536, w) &&
                                               parse_int(text.substr(x + 1), 1, 65536, h);
  if (!ok)
    throw std::invalid_argument(
        "invalid size '" + text +
        "' (expected N or WxH with sides in 1..65536, e.g. 512 or 640x480)");
  if (const std::string big = grid_elements_problem(w, h); !big.empty())
    throw std::invalid_argument("invalid size '" + text + "': " + big);
  return {static_cast<int>(w), static_cast<int>(h)};
}

int parse_count(const std::string& option, const std::string& text, int min_value, int max_value) {
  long v = 0;
  if (!parse_int(text, min_value, max_value, v))
    throw std::invalid_argument("invalid --" + option + " '" + text + "' (expected an integer in " +
                                std::to_string(min_value) + ".." + std::to_string(max_value) + ")");
  return static_cast<int>(v);
}

double parse_fraction(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(v > 0.0 && v < 1.0))
    throw std::invalid_argument("invalid --" + option + " '" + text +
                                "' (expected a fraction in (0, 1), e.g. 0.01)");
  return v;
}

double parse_seconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(v > 0.0 && v <= 3600.0))
    throw std::invalid_argument("invalid --" + option + " '" + text +
                                "' (expected seconds in (0, 3600], e.g. 1 or 0.5)");
  return v;
}

std::vector<const AppDescriptor*> parse_apps(const std::string& text) {
  std::vector<const AppDescriptor*> out;
  for (const auto& name : split_list(text)) {
    if (name == "all") {
      out.clear();
      for (const auto& a : app_registry()) out.push_back(&a);
      return out;
    }
    const AppDescriptor* app = &find_app(name);
    bool seen = false;
    for (auto* o : out) seen = seen || o == app;
    if (!seen) out.push_back(app);
  }
  return out;
}

std::vector<WorkGroup> spec_wg_candidates() {
  std::vector<WorkGroup> out;
  for (int wx : {4, 8, 16, 32, 64, 128, 256})
    for (int wy : {1, 2, 4, 8, 16, 32}) out.push_back({wx, wy});
  return out;
}

std::vector<WorkGroup> cpu_wg_candidates() { return {{16, 4}, {32, 8}, {64, 4}, {16, 16}}; }

std::vector<WorkGroup> gpu_wg_candidates() { return {{16, 8}, {32, 4}, {32, 8}, {64, 4}}; }

std::vector<WorkGroup> gpu_chain_candidates() {
  return {{32, 4, 4, 4}, {32, 8, 4, 4}, {32, 4, 4, 2}};
}

std::vector<WorkGroup> gpu_block_candidates() {
  // PY 6: a whole number of rows:2 and rows:3 periods per work-item, where their fused gather
  // folds to compile-time offsets.
  return with_outputs_per_item(gpu_wg_candidates(), {4}, {1, 4, 6});
}

}  // namespace kperf
