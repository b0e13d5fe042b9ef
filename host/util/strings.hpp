// Small text helpers shared by the parsers of every layer.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace kperf {

// Splits "a, b,c" into trimmed items; empty items are kept (callers reject them).
std::vector<std::string> split_list(const std::string& text);

// FNV-1a in hex: stable across builds and machines, for names and fingerprints (not security).
std::string fnv1a_hex(const std::string& text);

// Whether a command's arguments (argv[2..], before any parsing) give one of `flags`, alone or as
// FLAG=VALUE: what main() and the supervisor decide before a command parses its options.
bool argv_names(int argc, char** argv, std::initializer_list<const char*> flags);

}  // namespace kperf
