// Small text helpers shared by the parsers of every layer.
#pragma once

#include <string>
#include <vector>

namespace kperf {

// Splits "a, b,c" into trimmed items; empty items are kept (callers reject them).
std::vector<std::string> split_list(const std::string& text);

}  // namespace kperf
