// libFuzzer target: the input readers (image via stb_image, .npy, Rodinia text). Every input is
// fed to all three; a reader may only return a valid grid or throw InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io.hpp"

namespace {

void check(const kperf::Grid& g) {
  if (g.width < 1 || g.height < 1 || g.size() != static_cast<std::size_t>(g.width) * g.height)
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    check(kperf::decode_image(bytes, "fuzz.png"));
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
