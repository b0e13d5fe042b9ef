// Deterministic built-in inputs: image-like fields and a Rodinia-style chip (temp, power).
#include "synthetic.hpp"

#include <algorithm>
#include <cmath>

namespace kperf {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

const std::vector<std::string>& synthetic_image_names() {
  static const std::vector<std::string> names = {"smooth", "noise", "zoneplate", "document"};
  return names;
}

namespace {

// Rescales the grid linearly onto [lo, hi].
void normalise(Grid& g, float lo, float hi) {
  const auto [mn, mx] = std::minmax_element(g.data.begin(), g.data.end());
  const float a = *mn, span = *mx - *mn;
  for (float& v : g.data) v = span > 0 ? lo + (v - a) / span * (hi - lo) : (lo + hi) / 2;
}

// Fractal value noise: octaves of bilinearly interpolated random lattices with 1/f amplitude.
Grid fractal_field(int width, int height, SplitMix64& rng, int octaves) {
  Grid g(width, height);
  const int side = std::max(width, height);
  double amplitude = 1.0;
  int cells = 3;
  for (int o = 0; o < octaves && cells <= side; ++o, cells *= 2, amplitude *= 0.55) {
    const int n = cells + 2;
    std::vector<double> lattice(static_cast<std::size_t>(n) * n);
    for (double& v : lattice) v = rng.uniform();
    const double scale = static_cast<double>(cells) / side;
    for (int y = 0; y < height; ++y) {
      const double fy = y * scale;
      const int y0 = static_cast<int>(fy);
      const double ty = fy - y0, sy = ty * ty * (3 - 2 * ty);
      for (int x = 0; x < width; ++x) {
        const double fx = x * scale;
        const int x0 = static_cast<int>(fx);
        const double tx = fx - x0, sx = tx * tx * (3 - 2 * tx);
        auto L = [&](int yy, int xx) { return lattice[static_cast<std::size_t>(yy) * n + xx]; };
        const double top = L(y0, x0) * (1 - sx) + L(y0, x0 + 1) * sx;
        const double bot = L(y0 + 1, x0) * (1 - sx) + L(y0 + 1, x0 + 1) * sx;
        g.at(y, x) += static_cast<float>(amplitude * (top * (1 - sy) + bot * sy));
      }
    }
  }
  return g;
}

void fill_rect(Grid& g, int y0, int x0, int h, int w, float v) {
  for (int y = std::max(0, y0); y < std::min(g.height, y0 + h); ++y)
    for (int x = std::max(0, x0); x < std::min(g.width, x0 + w); ++x) g.at(y, x) = v;
}

}  // namespace

Grid make_synthetic_image(const std::string& name, int width, int height, std::uint64_t seed) {
  if (width < 1 || height < 1 || width > kMaxGridSide || height > kMaxGridSide)
    throw InputError("synthetic:" + name + ": size " + std::to_string(width) + "x" +
                     std::to_string(height) + " is outside 1.." + std::to_string(kMaxGridSide));
  if (const std::string big = grid_elements_problem(width, height); !big.empty())
    throw InputError("synthetic:" + name + ": size " + big);
  std::uint64_t name_hash = 1469598103934665603ULL;  // FNV-1a: each generator its own stream.
  for (unsigned char c : name) name_hash = (name_hash ^ c) * 1099511628211ULL;
  SplitMix64 rng(seed ^ name_hash);
  if (name == "smooth") {
    Grid g = fractal_field(width, height, rng, 7);
    normalise(g, 0.0f, 255.0f);
    return g;
  }
  if (name == "noise") {
    Grid g(width, height);
    for (float& v : g.data) v = static_cast<float>(rng.uniform() * 255.0);
    return g;
  }
  if (name == "zoneplate") {
    // cos(k r^2) with the local frequency reaching Nyquist at the far corner.
    Grid g(width, height);
    const double cx = width / 2.0, cy = height / 2.0;
    const double rmax2 = cx * cx + cy * cy;
    const double k = M_PI / (2.0 * std::sqrt(rmax2));  // k r / pi cycles/pixel: 0.5 at r_max
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
        const double r2 = dx * dx + dy * dy;
        g.at(y, x) = static_cast<float>(127.5 + 127.5 * std::cos(k * r2));
      }
    return g;
  }
  if (name == "document") {
    // Paper background, a few gray figure boxes, and lines of "words" (dark bars).
    Grid g(width, height, 235.0f);
    const int line_h = std::max(2, height / 48);
    const int margin = std::max(1, width / 16);
    for (int b = 0; b < 3; ++b) {
      const int bw = static_cast<int>(width * (0.15 + 0.2 * rng.uniform()));
      const int bh = static_cast<int>(height * (0.08 + 0.12 * rng.uniform()));
      fill_rect(g, static_cast<int>(rng.uniform() * (height - bh)),
                static_cast<int>(rng.uniform() * (width - bw)), bh, bw,
                static_cast<float>(90 + 100 * rng.uniform()));
    }
    for (int y = margin; y + line_h < height - margin; y += 2 * line_h) {
      int x = margin;
      while (x < width - margin) {
        const int word = std::max(1, static_cast<int>(line_h * (1 + 4 * rng.uniform())));
        fill_rect(g, y, x, line_h, std::min(word, width - margin - x),
                  static_cast<float>(10 + 40 * rng.uniform()));
        x += word + std::max(1, line_h / 2 + static_cast<int>(line_h * rng.uniform()));
      }
    }
    return g;
  }
  std::string valid;
  for (const auto& n : synthetic_image_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError("synthetic:" + name + ": unknown generator (valid: " + valid + ")");
}

HotspotInput make_synthetic_chip(int width, int height, std::uint64_t seed) {
  if (width < 1 || height < 1 || width > kMaxGridSide || height > kMaxGridSide)
    throw InputError("synthetic chip: size " + std::to_string(width) + "x" +
                     std::to_string(height) + " is outside 1.." + std::to_string(kMaxGridSide));
  if (const std::string big = grid_elements_problem(width, height); !big.empty())
    throw InputError("synthetic chip: size " + big);
  SplitMix64 rng(seed);
  // Floorplan: recursive guillotine cuts into functional units, each with its power density
  // (W/m^2) drawn from a few classes (caches, logic, hot execution units).
  struct Unit {
    double y0, x0, y1, x1;
  };
  std::vector<Unit> units = {{0, 0, 1, 1}};
  for (int cut = 0; cut < 24; ++cut) {
    std::size_t pick = 0;
    double best = -1;
    for (std::size_t i = 0; i < units.size(); ++i) {
      const double area = (units[i].y1 - units[i].y0) * (units[i].x1 - units[i].x0);
      if (area > best) best = area, pick = i;
    }
    Unit u = units[pick];
    const double f = 0.3 + 0.4 * rng.uniform();
    Unit a = u, b = u;
    if ((u.y1 - u.y0) > (u.x1 - u.x0)) {
      a.y1 = b.y0 = u.y0 + f * (u.y1 - u.y0);
    } else {
      a.x1 = b.x0 = u.x0 + f * (u.x1 - u.x0);
    }
    units[pick] = a;
    units.push_back(b);
  }
  const double kMaxPd = 3.0e6;
  const double classes[] = {0.02, 0.08, 0.25, 0.6, 0.95};
  const double cell_area = (0.016 / height) * (0.016 / width);
  HotspotInput chip{Grid(width, height), Grid(width, height)};
  Grid density(width, height);
  for (const Unit& u : units) {
    const double d = kMaxPd * classes[rng.next() % 5] * (0.85 + 0.15 * rng.uniform());
    const int y0 = static_cast<int>(u.y0 * height), y1 = static_cast<int>(u.y1 * height);
    const int x0 = static_cast<int>(u.x0 * width), x1 = static_cast<int>(u.x1 * width);
    fill_rect(density, y0, x0, std::max(1, y1 - y0), std::max(1, x1 - x0),
              static_cast<float>(d / kMaxPd));
  }
  // Temperature: ambient-plus-offset following a blurred density (heat spreads), 323..344 K.
  Grid field = fractal_field(width, height, rng, 3);
  normalise(field, 0.0f, 1.0f);
  Grid blurred = density;
  const int radius = std::max(1, std::min(width, height) / 32);
  for (int pass = 0; pass < 2; ++pass) {
    Grid tmp = blurred;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        double s = 0;
        int n = 0;
        for (int d = -radius; d <= radius; d += std::max(1, radius / 4)) {
          s += tmp.at(std::clamp(y + d, 0, height - 1), x) +
               tmp.at(y, std::clamp(x + d, 0, width - 1));
          n += 2;
        }
        blurred.at(y, x) = static_cast<float>(s / n);
      }
  }
  for (std::size_t i = 0; i < chip.temp.size(); ++i) {
    chip.power.data[i] = static_cast<float>(density.data[i] * kMaxPd * cell_area);
    chip.temp.data[i] = static_cast<float>(323.0 + 18.0 * blurred.data[i] + 3.0 * field.data[i]);
  }
  return chip;
}

}  // namespace kperf
