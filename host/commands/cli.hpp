// Parsers for command-line values (lists, work-group sizes, grid sizes, counts): pure
// functions that throw std::invalid_argument with a one-line message naming the problem.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "schemes.hpp"
#include "strings.hpp"

namespace kperf {

// "16x8,32x4" -> work-groups; every side a positive integer up to 65536.
std::vector<WorkGroup> parse_wg_list(const std::string& text);
WorkGroup parse_wg(const std::string& text);

// "1,4" -> outputs per work-item along x; each of 1, 2, 4.
std::vector<int> parse_vec_list(const std::string& text);
// "1,2,4" -> outputs per work-item along y; each in 1..16.
std::vector<int> parse_py_list(const std::string& text);
// Every work-group crossed with every vec and every py.
std::vector<WorkGroup> with_outputs_per_item(const std::vector<WorkGroup>& wgs,
                                             const std::vector<int>& vecs,
                                             const std::vector<int>& pys);

// "512" -> 512x512, "640x480" -> 640x480 (width x height), each side in 1..65536 and at most
// kMaxGridElements in all (io.hpp: the kernels index with 32-bit int).
std::pair<int, int> parse_size(const std::string& text);

// Non-negative (min 0) or positive (min 1) integer option values.
int parse_count(const std::string& option, const std::string& text, int min_value, int max_value);
// A number in (0, 1) for --option; throws std::invalid_argument naming the option.
double parse_fraction(const std::string& option, const std::string& text);
// A duration in seconds in (0, 3600]; throws std::invalid_argument naming the option.
double parse_seconds(const std::string& option, const std::string& text);

// "gaussian3,sobel5" or "all".
std::vector<const AppDescriptor*> parse_apps(const std::string& text);

// SPEC section 7 candidates: wx in {4..256}, wy in {1..32}.
std::vector<WorkGroup> spec_wg_candidates();
// A shorter candidate list for CPU devices, where each size is a separate compile and a full
// sweep would take far longer than the quick start allows.
std::vector<WorkGroup> cpu_wg_candidates();
// The work-groups kperf tune searches on a GPU (each with vec 1 and 4, py 1, 4 and 6), and the
// shapes they make with vec 4: where kperf's kernels reach the copy bound on NVIDIA's GPUs.
std::vector<WorkGroup> gpu_wg_candidates();
std::vector<WorkGroup> gpu_block_candidates();
// The launch shapes a chain's stage (and a fused chain) sweeps on a GPU by default: the blocks
// the H200's accurate and perforated chains ran fastest at (32x4 and 32x8, 4 x 4 outputs a
// work-item; 32x4 at 4 x 2), three so that a chain of two stages is nine chains of shapes.
std::vector<WorkGroup> gpu_chain_candidates();

}  // namespace kperf
