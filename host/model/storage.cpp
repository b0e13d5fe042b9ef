// Storage conversions: IEEE half and bfloat16, and the storage types (--precision).
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

// The even elements of 16 floats, in order: in[0], in[2], ..., in[14] (AVX2 shuffles).
__attribute__((target("avx2"))) inline __m256 even_of_16(const float* in) {
  const __m256 a = _mm256_loadu_ps(in), b = _mm256_loadu_ps(in + 8);
  const __m256 even =
      _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
}
// out[j] = in[2 j], streamed. The last group of 8 reads in[2 j + 15]: it stops at j + 9 <= n so
// that stays at or below in[2 n - 2].
__attribute__((target("avx2"))) void pairs_to_floats_avx2(const float* in, float* out,
                                                          std::size_t n) {
  std::size_t j = 0;
  for (; j < n && reinterpret_cast<std::uintptr_t>(out + j) % 32 != 0; ++j) out[j] = in[2 * j];
  for (; j + 9 <= n; j += 8) _mm256_stream_ps(out + j, even_of_16(in + 2 * j));
  for (; j < n; ++j) out[j] = in[2 * j];
}
__attribute__((target("avx2,f16c"))) void pairs_to_halves_avx2(const float* in, std::uint16_t* out,
                                                               std::size_t n) {
  std::size_t j = 0;
  for (; j < n && reinterpret_cast<std::uintptr_t>(out + j) % 16 != 0; ++j)
    out[j] = float_to_half(in[2 * j]);
  for (; j + 9 <= n; j += 8)
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + j),
                     _mm256_cvtps_ph(even_of_16(in + 2 * j), _MM_FROUND_TO_NEAREST_INT));
  for (; j < n; ++j) out[j] = float_to_half(in[2 * j]);
}
bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
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

int threads_for(long elements) { return host_threads_for(elements); }

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
void encode_pairs_f32(const float* in, void* out, std::size_t n) {
  auto* o = static_cast<float*>(out);
#ifdef KPERF_HAVE_F16C_PATH
  if (have_avx2()) return pairs_to_floats_avx2(in, o, n);
#endif
  for (std::size_t j = 0; j < n; ++j) o[j] = in[2 * j];
}
void encode_pairs_f16(const float* in, void* out, std::size_t n) {
  auto* o = static_cast<std::uint16_t*>(out);
#ifdef KPERF_HAVE_F16C_PATH
  if (have_avx2() && have_f16c()) return pairs_to_halves_avx2(in, o, n);
#endif
  for (std::size_t j = 0; j < n; ++j) o[j] = float_to_half(in[2 * j]);
}
void encode_pairs_bf16(const float* in, void* out, std::size_t n) {
  auto* o = static_cast<std::uint16_t*>(out);
  for (std::size_t j = 0; j < n; ++j) o[j] = float_to_bf16(in[2 * j]);
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
      {"f32", 4, "precision_f32.cl", encode_f32, decode_f32, encode_pairs_f32, round_f32, 0x10DE,
       23},
      {"f16", 2, "precision_f16.cl", encode_f16, decode_f16, encode_pairs_f16, round_to_half,
       0x10DD, 10},
      {"bf16", 2, "precision_bf16.cl", encode_bf16, decode_bf16, encode_pairs_bf16, round_to_bf16,
       0, 7},
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

}  // namespace kperf
