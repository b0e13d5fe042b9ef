// The input as the device receives it (semantics §7, §8): the grid converted to the variant's
// input storage type and, under --perforate host, packed down to the lines a rows:K / cols:K
// scheme keeps; and the memcpy that packing is held to.
#pragma once

#include <cstddef>
#include <vector>

#include "io.hpp"
#include "schemes.hpp"

namespace kperf {

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

// The packing's floor: every cache line of the grid rows that write_input reads for variant v
// (each row once; under cols:K every row, since kept and dropped columns share every line),
// loaded and nothing else, on the same threads. No packing of v can take less. Returns the
// bytes of those rows; *sink takes a value that depends on every line, so none is skipped.
std::size_t read_source_lines(const Variant& v, int radius, const Grid& grid, float* sink);

}  // namespace kperf
