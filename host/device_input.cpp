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

#ifdef KPERF_HAVE_AVX_PATH
// Every other float from in[0] on: out[j] = in[2 j], eight at a time (AVX2 shuffles).
__attribute__((target("avx2"))) std::size_t gather_pairs_avx2(const float* in, float* out,
                                                              std::size_t n) {
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 a = _mm256_loadu_ps(in + 2 * j), b = _mm256_loadu_ps(in + 2 * j + 8);
    const __m256 even =
        _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    _mm256_storeu_ps(out + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even),
                                                                     _MM_SHUFFLE(3, 1, 2, 0))));
  }
  return j;
}
bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// out[j] = in[j * stride], j < n (columns kept by cols:K inside one row).
void gather_strided(const float* in, std::size_t stride, float* out, std::size_t n) {
  std::size_t j = 0;
#ifdef KPERF_HAVE_AVX_PATH
  // The last 8-group reads up to in[2 j + 15]; keep it inside the row.
  if (stride == 2 && n >= 9 && have_avx2()) j = gather_pairs_avx2(in, out, n - 1);
#endif
  for (; j < n; ++j) out[j] = in[j * stride];
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
  const bool half = !stored.is_float();  // gathered columns go through a float row first
  const bool pack_rows = host_packs(v) && packs_rows(v);
  const bool pack_cols = host_packs(v) && !packs_rows(v);
  const int k = v.skip;
  auto source_line = [&](int p, int n) { return packed_source_line(p, k, radius, n); };
  const std::size_t width = static_cast<std::size_t>(layout.width);
  // Packed columns p in [first, last) read in-row columns p * k - radius: no clamping there.
  const int first_inside = pack_cols ? (radius + k - 1) / k : 0;
  const int last_inside = pack_cols ? std::max(first_inside, (grid.width - 1 + radius) / k + 1) : 0;
  const long elements = static_cast<long>(layout.width) * layout.height;
  parallel_chunks(layout.height, host_threads_for(elements), [&](int, long begin, long end) {
    std::vector<float> gathered(pack_cols && half ? width : 0);
    for (long row = begin; row < end; ++row) {
      const int src_row =
          pack_rows ? source_line(static_cast<int>(row), grid.height) : static_cast<int>(row);
      const float* src = grid.data.data() + static_cast<std::size_t>(src_row) * grid.width;
      const std::size_t offset = static_cast<std::size_t>(row) * width;
      if (pack_cols) {
        float* out = half ? gathered.data() : static_cast<float*>(dst) + offset;
        for (int p = 0; p < first_inside; ++p) out[p] = src[source_line(p, grid.width)];
        gather_strided(src + (static_cast<std::size_t>(first_inside) * k - radius), k,
                       out + first_inside, static_cast<std::size_t>(last_inside - first_inside));
        for (int p = last_inside; p < layout.width; ++p) out[p] = src[source_line(p, grid.width)];
        if (!half) continue;
        src = gathered.data();
      }
      stored.encode_run(src, static_cast<unsigned char*>(dst) + offset * stored.bytes, width);
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
