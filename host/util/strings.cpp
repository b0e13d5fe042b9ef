// Small text helpers shared by the parsers of every layer.
#include "strings.hpp"

#include <cstdint>
#include <cstdio>

namespace kperf {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  auto flush = [&] {
    const auto start = item.find_first_not_of(" \t");
    const auto end = item.find_last_not_of(" \t");
    items.push_back(start == std::string::npos ? "" : item.substr(start, end - start + 1));
    item.clear();
  };
  for (char c : text) {
    if (c == ',')
      flush();
    else
      item.push_back(c);
  }
  flush();
  return items;
}

bool argv_names(int argc, char** argv, std::initializer_list<const char*> flags) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const char* flag : flags)
      if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0) return true;
  }
  return false;
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace kperf
