// Host-side preparation of the device input: conversion to the input storage type and host
// perforation's packing, streamed into the (pinned) upload buffer.
#include "device_input.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "parallel.hpp"
#include "storage.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KPERF_HAVE_AVX_PATH 1
#endif

namespace kperf {
namespace {

// out[j] = in[j * stride], j < n (columns kept by cols:K inside one row; K = 2 has a one-pass
// encoder per storage type instead).
void gather_strided(const float* in, std::size_t stride, float* out, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) out[j] = in[j * stride];
}

bool host_packs(const Variant& v) { return v.host_perforate; }

// The grid line packed line p holds, on an axis of n lines (packed_lines() says why).
int packed_source_line(int p, int skip, int radius, int n) {
  return std::clamp(p * skip - radius, 0, n - 1);
}
bool packs_rows(const Variant& v) { return std::string(v.scheme->family) == "rows"; }

}  // namespace

int packed_lines(int n, int radius, int skip) { return (n - 1 + radius + skip - 1) / skip + 1; }

InputLayout input_layout(const Variant& v, int radius, int width, int height) {
  InputLayout layout{width, height, v.precision_info().in->bytes};
  if (host_packs(v)) {
    if (packs_rows(v))
      layout.height = packed_lines(height, radius, v.skip);
    else
      layout.width = packed_lines(width, radius, v.skip);
  }
  return layout;
}

void write_input(const Variant& v, int radius, const Grid& grid, void* dst) {
  const InputLayout layout = input_layout(v, radius, grid.width, grid.height);
  const StorageType& stored = *v.precision_info().in;
  const bool pack_rows = host_packs(v) && packs_rows(v);
  const bool pack_cols = host_packs(v) && !packs_rows(v);
  const int k = v.skip;
  auto source_line = [&](int p, int n) { return packed_source_line(p, k, radius, n); };
  const std::size_t width = static_cast<std::size_t>(layout.width);
  // Packed columns p in [first, last) read in-row columns p * k - radius: no clamping there.
  const int first_inside = pack_cols ? (radius + k - 1) / k : 0;
  const int last_inside = pack_cols ? std::max(first_inside, (grid.width - 1 + radius) / k + 1) : 0;
  const std::size_t inside = static_cast<std::size_t>(last_inside - first_inside);
  const long elements = static_cast<long>(layout.width) * layout.height;
  parallel_chunks(layout.height, host_threads_for(elements), [&](int, long begin, long end) {
    std::vector<float> gathered(pack_cols && k != 2 ? inside : 0);
    for (long row = begin; row < end; ++row) {
      const int src_row =
          pack_rows ? source_line(static_cast<int>(row), grid.height) : static_cast<int>(row);
      const float* src = grid.data.data() + static_cast<std::size_t>(src_row) * grid.width;
      unsigned char* out =
          static_cast<unsigned char*>(dst) + static_cast<std::size_t>(row) * width * stored.bytes;
      if (!pack_cols) {
        stored.encode_run(src, out, width);
        continue;
      }
      // The clamped edge columns one by one, the inside in one pass over the row.
      auto put_edge = [&](int p) {
        stored.encode_run(src + source_line(p, grid.width), out + p * stored.bytes, 1);
      };
      for (int p = 0; p < first_inside; ++p) put_edge(p);
      const float* in = src + (static_cast<std::size_t>(first_inside) * k - radius);
      unsigned char* inside_out = out + static_cast<std::size_t>(first_inside) * stored.bytes;
      if (k == 2) {
        stored.encode_pairs_run(in, inside_out, inside);
      } else {
        gather_strided(in, static_cast<std::size_t>(k), gathered.data(), inside);
        stored.encode_run(gathered.data(), inside_out, inside);
      }
      for (int p = last_inside; p < layout.width; ++p) put_edge(p);
    }
  });
#ifdef KPERF_HAVE_AVX_PATH
  _mm_sfence();  // the streaming stores are visible before the upload reads them
#endif
}

void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  parallel_chunks(
      static_cast<long>(bytes / 64), host_threads_for(static_cast<long>(bytes / 4)),
      [&](int, long begin, long end) {
        const std::size_t b = static_cast<std::size_t>(begin) * 64;
        const std::size_t e =
            end == static_cast<long>(bytes / 64) ? bytes : static_cast<std::size_t>(end) * 64;
        std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
      });
}

std::size_t read_source_lines(const Variant& v, int radius, const Grid& grid, float* sink) {
  const InputLayout layout = input_layout(v, radius, grid.width, grid.height);
  const bool pack_rows = host_packs(v) && packs_rows(v);
  // Packed rows name grid rows clamp(p * k - r): the edge rows repeat, but are read once.
  std::vector<char> read(static_cast<std::size_t>(grid.height), pack_rows ? 0 : 1);
  if (pack_rows)
    for (int p = 0; p < layout.height; ++p)
      read[static_cast<std::size_t>(packed_source_line(p, v.skip, radius, grid.height))] = 1;
  constexpr std::size_t kLine = 64 / sizeof(float);
  const long elements = static_cast<long>(layout.width) * layout.height;
  const int threads = host_threads_for(elements);
  std::vector<float> partial(static_cast<std::size_t>(threads), 0.0f);
  parallel_chunks(grid.height, threads, [&](int t, long begin, long end) {
    float acc = 0;
    for (long row = begin; row < end; ++row) {
      if (!read[static_cast<std::size_t>(row)]) continue;
      const float* src = grid.data.data() + static_cast<std::size_t>(row) * grid.width;
      for (std::size_t i = 0; i < static_cast<std::size_t>(grid.width); i += kLine) acc += src[i];
    }
    partial[static_cast<std::size_t>(t)] = acc;
  });
  for (float p : partial) *sink += p;
  return static_cast<std::size_t>(std::count(read.begin(), read.end(), 1)) * grid.width *
         sizeof(float);
}

std::vector<unsigned char> make_input(const Variant& v, int radius, const Grid& grid) {
  std::vector<unsigned char> out(input_layout(v, radius, grid.width, grid.height).bytes());
  write_input(v, radius, grid, out.data());
  return out;
}

}  // namespace kperf
