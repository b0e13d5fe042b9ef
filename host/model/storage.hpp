// Storage conversions (semantics §7): IEEE half (round to nearest even, as vstore_half_rte),
// bfloat16 and the storage types' bulk encode/decode, split across cores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage_types.hpp"

namespace kperf {

std::uint16_t float_to_half(float value);  // round to nearest even; NaN stays NaN
float half_to_float(std::uint16_t bits);
double round_to_half(double value);  // the value a float rounded to half holds
// Bulk conversions, split across cores (F16C instructions where the CPU has them); identical
// results to the scalar functions for every non-NaN value.
void floats_to_halves(const float* in, std::uint16_t* out, std::size_t n);
void halves_to_floats(const std::uint16_t* in, float* out, std::size_t n);
}  // namespace kperf
