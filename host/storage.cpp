// Half conversion and host-side packing of the input (SPEC 10: --precision, --perforate host).
#include "storage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "parallel.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KPERF_HAVE_F16C_PATH 1
#endif

namespace kperf {

std::uint16_t float_to_half(float value) {
  std::uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)  // infinity, or NaN kept quiet
    return sign | (ax > 0x7f800000u ? static_cast<std::uint16_t>(0x7e00u | ((ax >> 13) & 0x3ffu))
                                    : std::uint16_t{0x7c00u});
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // from 65520 up rounds to infinity
  if (ax < 0x38800000u) {
    // Below 2^-14: a multiple of 2^-24 (subnormal half). Scaling by 2^24 is exact and
    // nearbyint rounds to nearest even; 1024 lands on the smallest normal, as it should.
    float a;
    std::memcpy(&a, &ax, sizeof a);
    return sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  std::uint32_t h = ((ax >> 23) - 112u) << 10 | ((ax >> 13) & 0x3ffu);
  const std::uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -out : out;
  }
  const std::uint32_t x =
      sign | (exp == 31 ? 0x7f800000u | (mant << 13) : ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&out, &x, sizeof out);
  return out;
}

double round_to_half(double value) {
  return static_cast<double>(half_to_float(float_to_half(static_cast<float>(value))));
}

namespace {

#ifdef KPERF_HAVE_F16C_PATH
// Packed inputs are written once and read next by the device's DMA: non-temporal stores skip
// reading the destination's cache lines first (a plain store reads each line before writing it).
__attribute__((target("avx,f16c"))) void to_halves_f16c(const float* in, std::uint16_t* out,
                                                        std::size_t n) {
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % 16 != 0; ++i)
    out[i] = float_to_half(in[i]);
  for (; i + 8 <= n; i += 8)
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = float_to_half(in[i]);
}
__attribute__((target("avx"))) void copy_floats_avx(const float* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % 32 != 0; ++i) out[i] = in[i];
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(out + i, _mm256_loadu_ps(in + i));
  for (; i < n; ++i) out[i] = in[i];
}
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
__attribute__((target("avx,f16c"))) void to_floats_f16c(const std::uint16_t* in, float* out,
                                                        std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}
bool have_f16c() {
  static const bool yes = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return yes;
}
#endif

// One contiguous run of plain copies on the calling thread (streaming stores where the CPU has
// AVX).
void copy_floats_serial(const float* in, float* out, std::size_t n) {
#ifdef KPERF_HAVE_F16C_PATH
  if (have_f16c()) return copy_floats_avx(in, out, n);
#endif
  std::memcpy(out, in, n * sizeof(float));
}

// out[j] = in[j * stride], j < n (columns kept by cols:K inside one row).
void gather_strided(const float* in, std::size_t stride, float* out, std::size_t n) {
  std::size_t j = 0;
#ifdef KPERF_HAVE_F16C_PATH
  // The last 8-group reads up to in[2 j + 15]; keep it inside the row.
  if (stride == 2 && n >= 9 && have_avx2()) j = gather_pairs_avx2(in, out, n - 1);
#endif
  for (; j < n; ++j) out[j] = in[j * stride];
}

// One contiguous run of conversions on the calling thread.
void to_halves_serial(const float* in, std::uint16_t* out, std::size_t n) {
#ifdef KPERF_HAVE_F16C_PATH
  if (have_f16c()) return to_halves_f16c(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half(in[i]);
}
void to_floats_serial(const std::uint16_t* in, float* out, std::size_t n) {
#ifdef KPERF_HAVE_F16C_PATH
  if (have_f16c()) return to_floats_f16c(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}

// Below this many elements a thread costs more than it saves.
constexpr long kParallelMin = 1 << 16;

int threads_for(long elements) { return elements < kParallelMin ? 1 : host_threads(); }

bool host_packs(const Variant& v) { return v.host_perforate; }
bool packs_rows(const Variant& v) { return std::string(v.scheme->family) == "rows"; }

}  // namespace

void floats_to_halves(const float* in, std::uint16_t* out, std::size_t n) {
  parallel_chunks(static_cast<long>(n), threads_for(static_cast<long>(n)),
                  [&](int, long b, long e) {
                    to_halves_serial(in + b, out + b, static_cast<std::size_t>(e - b));
                  });
}

void halves_to_floats(const std::uint16_t* in, float* out, std::size_t n) {
  parallel_chunks(static_cast<long>(n), threads_for(static_cast<long>(n)),
                  [&](int, long b, long e) {
                    to_floats_serial(in + b, out + b, static_cast<std::size_t>(e - b));
                  });
}

std::uint16_t float_to_bf16(float value) {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &u, sizeof out);
  return out;
}

double round_to_bf16(double value) {
  return static_cast<double>(bf16_to_float(float_to_bf16(static_cast<float>(value))));
}

namespace {

void encode_f32(const float* in, void* out, std::size_t n) {
  copy_floats_serial(in, static_cast<float*>(out), n);
}
void decode_f32(const void* in, float* out, std::size_t n) {
  std::memcpy(out, in, n * sizeof(float));
}
void encode_f16(const float* in, void* out, std::size_t n) {
  to_halves_serial(in, static_cast<std::uint16_t*>(out), n);
}
void decode_f16(const void* in, float* out, std::size_t n) {
  to_floats_serial(static_cast<const std::uint16_t*>(in), out, n);
}
void encode_bf16(const float* in, void* out, std::size_t n) {
  auto* o = static_cast<std::uint16_t*>(out);
  for (std::size_t i = 0; i < n; ++i) o[i] = float_to_bf16(in[i]);
}
void decode_bf16(const void* in, float* out, std::size_t n) {
  const auto* i16 = static_cast<const std::uint16_t*>(in);
  for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(i16[i]);
}
double round_f32(double value) { return static_cast<double>(static_cast<float>(value)); }

}  // namespace

void StorageType::encode(const float* in, void* out, std::size_t n) const {
  parallel_chunks(
      static_cast<long>(n), threads_for(static_cast<long>(n)), [&](int, long b, long e) {
        encode_run(in + b, static_cast<unsigned char*>(out) + static_cast<std::size_t>(b) * bytes,
                   static_cast<std::size_t>(e - b));
      });
}

void StorageType::decode(const void* in, float* out, std::size_t n) const {
  parallel_chunks(
      static_cast<long>(n), threads_for(static_cast<long>(n)), [&](int, long b, long e) {
        decode_run(static_cast<const unsigned char*>(in) + static_cast<std::size_t>(b) * bytes,
                   out + b, static_cast<std::size_t>(e - b));
      });
}

const std::vector<StorageType>& storage_types() {
  // CL_FLOAT 0x10DE, CL_HALF_FLOAT 0x10DD (cl.h); bfloat16 has no image channel type in OpenCL 1.2.
  static const std::vector<StorageType> types = {
      {"f32", 4, "precision_f32.cl", encode_f32, decode_f32, round_f32, 0x10DE},
      {"f16", 2, "precision_f16.cl", encode_f16, decode_f16, round_to_half, 0x10DD},
      {"bf16", 2, "precision_bf16.cl", encode_bf16, decode_bf16, round_to_bf16, 0},
  };
  return types;
}

const StorageType& storage_type(const std::string& name) {
  for (const auto& t : storage_types())
    if (name == t.name) return t;
  throw std::invalid_argument("unknown storage type '" + name + "'");
}

std::size_t storage_index(const StorageType& type) {
  return static_cast<std::size_t>(&type - storage_types().data());
}

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
  auto source_line = [&](int p, int n) { return std::clamp(p * k - radius, 0, n - 1); };
  const std::size_t width = static_cast<std::size_t>(layout.width);
  // Packed columns p in [first, last) read in-row columns p * k - radius: no clamping there.
  const int first_inside = pack_cols ? (radius + k - 1) / k : 0;
  const int last_inside = pack_cols ? std::max(first_inside, (grid.width - 1 + radius) / k + 1) : 0;
  const long elements = static_cast<long>(layout.width) * layout.height;
  parallel_chunks(layout.height, threads_for(elements), [&](int, long begin, long end) {
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
#ifdef KPERF_HAVE_F16C_PATH
  _mm_sfence();  // the streaming stores are visible before the upload reads them
#endif
}

void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  parallel_chunks(
      static_cast<long>(bytes / 64), threads_for(static_cast<long>(bytes / 4)),
      [&](int, long begin, long end) {
        const std::size_t b = static_cast<std::size_t>(begin) * 64;
        const std::size_t e =
            end == static_cast<long>(bytes / 64) ? bytes : static_cast<std::size_t>(end) * 64;
        std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
      });
}

std::vector<unsigned char> make_input(const Variant& v, int radius, const Grid& grid) {
  std::vector<unsigned char> out(input_layout(v, radius, grid.width, grid.height).bytes());
  write_input(v, radius, grid, out.data());
  return out;
}

}  // namespace kperf
