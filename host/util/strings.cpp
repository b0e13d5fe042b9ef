// Small text helpers shared by the parsers of every layer.
#include "strings.hpp"

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

}  // namespace kperf
