// SHA-256 (FIPS 180-4), for the provenance of a run's kernel sources: a digest anyone can
// recompute with sha256sum or Python's hashlib, which the binary cache's FNV-1a keys are not.
#pragma once

#include <cstdint>
#include <string>

namespace kperf {

// Incremental SHA-256: update() with the bytes in any pieces, then hex().
class Sha256 {
 public:
  Sha256();
  void update(const std::string& bytes);
  void update(const unsigned char* data, std::size_t size);
  // The digest in lower-case hex; the object is spent afterwards.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed so far
};

// The SHA-256 of `bytes` in lower-case hex.
std::string sha256_hex(const std::string& bytes);

}  // namespace kperf
