// libFuzzer target: the input readers (image via stb_image, .npy, Rodinia text). Every input is
// fed to all three; a reader may only return a valid grid or throw InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include <stb_image.h>

#include "io.hpp"

namespace {

void check(const kperf::Grid& g) {
  if (g.width < 1 || g.height < 1 || g.size() != static_cast<std::size_t>(g.width) * g.height)
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // Images whose header claims more than 2^20 pixels are left out: decoding them is legitimate
  // (up to kMaxImagePixels) but each costs a large allocation, which would slow the fuzzer to a
  // crawl; the size checks themselves are unit-tested.
  int w = 0, h = 0, comp = 0;
  const bool huge = stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &comp) &&
                    static_cast<long long>(w) * h > (1LL << 20);
  try {
    if (!huge) check(kperf::decode_image(bytes, "fuzz.png"));
  } catch (const kperf::InputError&) {
  }
  try {
    check(kperf::decode_npy(bytes, "fuzz.npy"));
  } catch (const kperf::InputError&) {
  }
  try {
    check(kperf::parse_rodinia(bytes, "fuzz.txt"));
  } catch (const kperf::InputError&) {
  }
  return 0;
}
