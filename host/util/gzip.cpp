// gzip containers (RFC 1952) around stb's deflate, for result documents (*.json.gz).
#include "gzip.hpp"

#include <stb_image.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "io.hpp"

// Defined in libstb (stb_image_write.c) but not declared by its header: a zlib stream (2-byte
// header, deflate data, Adler-32) of `data`, allocated with malloc.
extern "C" unsigned char* stbi_zlib_compress(unsigned char* data, int data_len, int* out_len,
                                             int quality);

namespace kperf {

namespace {

std::uint32_t crc32(const std::string& bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put_le32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xffu);
}

std::uint32_t get_le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = v << 8 | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
  return v;
}

constexpr int kQuality = 9;  // stb's hash-chain effort; JSON shrinks about 5x

}  // namespace

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

bool is_gzip_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

std::string gzip_compress(const std::string& bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("gzip: a document of " + std::to_string(bytes.size()) +
                             " bytes is too large to compress");
  int zlen = 0;
  std::unique_ptr<unsigned char, decltype(&std::free)> z(
      stbi_zlib_compress(reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data())),
                         static_cast<int>(bytes.size()), &zlen, kQuality),
      &std::free);
  if (!z || zlen < 6) throw std::runtime_error("gzip: compression failed");
  // Header: magic, deflate, no flags, no time, no extra flags, unknown OS.
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  if (bytes.empty())
    out.append("\x03\x00", 2);  // stb writes no block for nothing: one empty final fixed block
  else
    out.append(reinterpret_cast<const char*>(z.get()) + 2, static_cast<std::size_t>(zlen) - 6);
  put_le32(out, crc32(bytes));
  put_le32(out, static_cast<std::uint32_t>(bytes.size()));
  return out;
}

std::string gzip_decompress(const std::string& bytes, const std::string& name) {
  std::string out;
  std::size_t at = 0;
  auto bad = [&](const std::string& why) { return InputError(name + ": " + why); };
  while (at < bytes.size()) {
    if (bytes.size() - at < 18 || !is_gzip(bytes.substr(at, 2)) ||
        static_cast<unsigned char>(bytes[at + 2]) != 8)
      throw bad("not a gzip stream (or truncated)");
    const unsigned flags = static_cast<unsigned char>(bytes[at + 3]);
    std::size_t p = at + 10;
    auto need = [&](std::size_t n) {
      if (p + n > bytes.size()) throw bad("truncated gzip header");
    };
    if (flags & 0x04) {  // FEXTRA
      need(2);
      p += 2 +
           (static_cast<unsigned char>(bytes[p]) | static_cast<unsigned char>(bytes[p + 1]) << 8);
    }
    for (unsigned bit : {0x08u, 0x10u})  // FNAME, FCOMMENT: zero-terminated
      if (flags & bit) {
        while (p < bytes.size() && bytes[p] != '\0') ++p;
        need(1);
        ++p;
      }
    if (flags & 0x02) p += 2;  // FHCRC
    if (p + 8 > bytes.size()) throw bad("truncated gzip stream");
    // The deflate data runs up to the 8-byte trailer of this member; stb stops at its end
    // block, so the whole rest is handed over and the member's length read back from it.
    const std::size_t avail = bytes.size() - p;
    if (avail > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw bad("gzip member too large");
    int len = 0;
    std::unique_ptr<char, decltype(&std::free)> data(
        stbi_zlib_decode_noheader_malloc(bytes.data() + p, static_cast<int>(avail), &len),
        &std::free);
    if (!data) throw bad("corrupt gzip data (" + std::string(stbi_failure_reason()) + ")");
    const std::string member(data.get(), static_cast<std::size_t>(len));
    // stb does not report how much input it consumed: the trailer is found by the CRC and size
    // of what it decoded, and the next member, if any, follows it.
    const std::uint32_t crc = crc32(member), size = static_cast<std::uint32_t>(member.size());
    std::size_t trailer = std::string::npos;
    auto matches = [&](std::size_t t) {
      return get_le32(bytes, t) == crc && get_le32(bytes, t + 4) == size;
    };
    if (matches(bytes.size() - 8)) trailer = bytes.size() - 8;  // one member: the usual case
    for (std::size_t t = p; trailer == std::string::npos && t + 8 <= bytes.size(); ++t)
      if (matches(t) && is_gzip(bytes.substr(t + 8, 2))) trailer = t;
    if (trailer == std::string::npos) throw bad("gzip CRC or size mismatch (corrupt or truncated)");
    out += member;
    at = trailer + 8;
  }
  return out;
}

std::string read_document(const std::string& path) {
  std::string bytes = read_file(path);
  return is_gzip(bytes) ? gzip_decompress(bytes, path) : bytes;
}

void write_document_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, is_gzip_path(path) ? gzip_compress(text) : text);
}

double checkpoint_interval_s() {
  const char* text = std::getenv("KPERF_CHECKPOINT_S");
  if (!text || !*text) return 10;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end != '\0' || !(s >= 0) || s > 1e9)
    throw std::invalid_argument(std::string("KPERF_CHECKPOINT_S=") + text +
                                ": expected seconds between checkpoints, a number >= 0");
  return s;
}

}  // namespace kperf
