// Storage precision and host perforation (SPEC 10): IEEE half conversion (round to nearest
// even, as vstore_half_rte), and the input as the device receives it: converted to half and/or
// packed down to the lines a rows:K / cols:K scheme keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io.hpp"
#include "schemes.hpp"
#include "storage_types.hpp"

namespace kperf {

std::uint16_t float_to_half(float value);  // round to nearest even; NaN stays NaN
float half_to_float(std::uint16_t bits);
double round_to_half(double value);  // the value a float rounded to half holds
// Bulk conversions, split across cores (F16C instructions where the CPU has them); identical
// results to the scalar functions for every non-NaN value.
void floats_to_halves(const float* in, std::uint16_t* out, std::size_t n);
void halves_to_floats(const std::uint16_t* in, float* out, std::size_t n);

// Lines of an axis of n that host perforation uploads for a scheme of period `skip` on an app
// of radius r: packed line p holds grid line clamp(p * skip - r), p < ceil((n - 1 + r) / skip) + 1
// (perforate_host.cl reads them back).
int packed_lines(int n, int radius, int skip);

// The input buffer the kernel of a variant reads: its shape (the grid, or packed lines) and
// element size.
struct InputLayout {
  int width = 0, height = 0;
  std::size_t element_bytes = 4;
  std::size_t bytes() const { return static_cast<std::size_t>(width) * height * element_bytes; }
};
InputLayout input_layout(const Variant& v, int radius, int width, int height);

// Writes the device input of variant v (packed and/or converted) into dst, which holds
// input_layout(...).bytes() bytes; parallel over rows.
void write_input(const Variant& v, int radius, const Grid& grid, void* dst);
std::vector<unsigned char> make_input(const Variant& v, int radius, const Grid& grid);

// A plain memcpy split across the same threads as the packing: the bandwidth packing is held to.
void parallel_memcpy(void* dst, const void* src, std::size_t bytes);

}  // namespace kperf
