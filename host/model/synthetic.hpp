// Deterministic built-in inputs: image-like fields and a Rodinia-style chip (temp, power).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io.hpp"

namespace kperf {

// Names accepted by synthetic:NAME, in the order `--input synthetic:all` would use.
const std::vector<std::string>& synthetic_image_names();

// Image-like grid in [0, 255]: "smooth" (natural-looking fractal field), "noise" (white noise),
// "zoneplate" (high-frequency chirp), "document" (flat regions with sharp edges, text-like).
// Same name, size and seed give the same bytes on every machine. Throws InputError for an
// unknown name.
Grid make_synthetic_image(const std::string& name, int width, int height,
                          std::uint64_t seed = 2019);

// A plausible chip: rectangular functional units with different power densities (power per
// cell, Rodinia's scale for that grid size) and temperatures above ambient following them.
struct HotspotInput {
  Grid temp;
  Grid power;
};
HotspotInput make_synthetic_chip(int width, int height, std::uint64_t seed = 2019);

// Small deterministic generator (splitmix64) so inputs do not depend on the C++ library.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1)
 private:
  std::uint64_t state_;
};

}  // namespace kperf
