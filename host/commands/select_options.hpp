// --select and the canary's options (SPEC 15), shared by kperf tune and kperf tune --pipeline:
// the options, their context block and the table of selections each prints.
#pragma once

#include <cstddef>
#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "input_canary.hpp"

namespace kperf {

struct SelectOptions {
  bool canary = false;     // --select lists canary (static is always chosen)
  std::size_t ladder = 4;  // --ladder K: configurations besides the accurate one
  CanarySettings settings;
};

void add_select_options(cxxopts::Options& options, const char* what);
// Bad values are a UsageError.
SelectOptions read_select_options(const cxxopts::ParseResult& args);
// The context's select block: the methods, the ladder, the canary's settings and the method in
// words (`rungs`: what a rung is, "configurations" or "chains").
nlohmann::ordered_json select_context(const SelectOptions& s, double reach, const char* rungs);
// The header of the selections table, and one row: the static choice's holds and the select
// block's verdict, speedups and the canary's coverage.
void print_selections_header(const char* first_column);
void print_selection(const std::string& name, const nlohmann::ordered_json& choice,
                     const nlohmann::ordered_json& select, const nlohmann::ordered_json& tracking);

}  // namespace kperf
