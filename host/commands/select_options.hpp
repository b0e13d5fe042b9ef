// --select and the canary's options (SPEC 15), shared by kperf tune and kperf tune --pipeline:
// the options, their context block and the table of selections each prints.
#pragma once

#include <cstddef>
#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "input_canary.hpp"
#include "select_walk.hpp"

namespace kperf {

void add_select_options(cxxopts::Options& options, const char* what);
// Bad values are a UsageError.
SelectOptions read_select_options(const cxxopts::ParseResult& args);
// The header of the selections table, and one row: the static choice's holds and the select
// block's verdict, speedups and the canary's coverage.
void print_selections_header(const char* first_column);
void print_selection(const std::string& name, const nlohmann::ordered_json& choice,
                     const nlohmann::ordered_json& select, const nlohmann::ordered_json& tracking);

}  // namespace kperf
