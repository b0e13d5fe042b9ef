// How a grid's elements are stored in global memory (semantics §7): float, IEEE half, bfloat16.
// The storage precisions are pairs of these (input, output); each type says its size, how the
// host converts to and from it, how the CPU model rounds to it, and how images and the device
// metrics read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kperf {

struct StorageType {
  const char* name;     // "f32", "f16", "bf16"
  std::size_t bytes;    // per element
  const char* cl_file;  // the precision file storing input and output so (kernels read through it)
  // Conversions of one contiguous run of n elements on the calling thread, rounding as the
  // kernels' stores round (to nearest even, NaN kept); encode()/decode() split big grids across
  // cores.
  void (*encode_run)(const float* in, void* out, std::size_t n);
  void (*decode_run)(const void* in, float* out, std::size_t n);
  // Every other element, in[2 j] for j < n, encoded in one pass (host packing of cols:2: the
  // gathered floats never go through the cache before their conversion). Reads in[0..2 n - 2].
  void (*encode_pairs_run)(const float* in, void* out, std::size_t n);
  double (*round)(double value);  // the value a double holds once stored (CPU models)
  // The OpenCL image channel type the image load path reads it from (0: no image format).
  unsigned image_channel_type;
  int mantissa_bits;  // stored fraction bits (23, 10, 7): an ulp is 2^(exponent - this)
  bool is_float() const { return bytes == 4; }
  void encode(const float* in, void* out, std::size_t n) const;
  void decode(const void* in, float* out, std::size_t n) const;
};

const std::vector<StorageType>& storage_types();           // f32, f16, bf16
constexpr std::size_t kStorageTypes = 3;                   // storage_types().size()
const StorageType& storage_type(const std::string& name);  // throws std::invalid_argument
// A type's place in storage_types() (an index for per-type buffers).
std::size_t storage_index(const StorageType& type);

// bfloat16: the upper 16 bits of a float rounded to nearest even; NaN stays a quiet NaN.
std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);
double round_to_bf16(double value);

}  // namespace kperf
