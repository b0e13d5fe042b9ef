// The rolling design's geometry (fused_rows.hpp), as schemes/fuse_roll.cl computes it.
#include "fused_rows.hpp"

#include <algorithm>
#include <string>

namespace kperf {

namespace {

int round_up(int v, int m) { return (v + m - 1) / m * m; }

bool rows_scheme(const Variant& v) { return std::string(v.scheme->family) == "rows"; }

}  // namespace

int RollingShape::block_x() const {
  const int align = std::max(4, launch.vec);
  return std::max(0, (columns() - 2 * halo_after_first) / align * align);
}

int RollingShape::input_width() const {
  return round_up(input_lead() + columns() + 2 * first_radius, 4);
}

RollingShape rolling_shape(const Chain& chain) {
  RollingShape s;
  s.rows = fuse_rows(chain);
  s.launch = chain.back().wg;
  for (const PipelineStage& st : chain) s.halo += st.app->radius;
  s.first_radius = chain.front().app->radius;
  s.halo_after_first = s.halo - s.first_radius;
  const Variant& first = chain.front().variant;
  s.reach = rows_scheme(first) ? first.skip - 1 : 0;
  return s;
}

std::pair<int, int> rolling_groups(const Chain& chain, int width, int height) {
  const RollingShape s = rolling_shape(chain);
  const int bx = std::max(1, s.block_x()), by = s.launch.y * s.rows;
  return {(width + bx - 1) / bx, (height + by - 1) / by};
}

std::size_t rolling_local_bytes(const Chain& chain) {
  const RollingShape s = rolling_shape(chain);
  const int py = s.launch.py, lag = (s.reach + py - 1) / py;
  std::size_t floats = static_cast<std::size_t>((2 * lag + 2) * py) * s.input_width();
  int halo = s.halo;
  for (std::size_t k = 0; k + 1 < chain.size(); ++k) {
    halo -= chain[k].app->radius;  // the halo of stage k's outputs
    floats += static_cast<std::size_t>(2 * py) * round_up(s.columns() + 2 * halo, 4);
  }
  return floats * static_cast<std::size_t>(s.launch.y) * sizeof(float);
}

std::vector<char> rolling_elements_read(const Chain& chain, int width, int height) {
  const RollingShape s = rolling_shape(chain);
  const auto [groups_x, groups_y] = rolling_groups(chain, width, height);
  const Variant& first = chain.front().variant;
  std::vector<char> rows(static_cast<std::size_t>(height), 0),
      cols(static_cast<std::size_t>(width), 0);
  for (int strip = 0; strip < groups_y * s.launch.y; ++strip) {
    const int y0 = strip * s.rows;
    for (int y = y0 - s.halo - s.reach; y < y0 + s.rows + s.halo + s.reach; ++y) {
      const int phase = ((y + s.first_radius) % first.skip + first.skip) % first.skip;
      if (!rows_scheme(first) || phase == 0) rows[std::clamp(y, 0, height - 1)] = 1;
    }
  }
  for (int g = 0; g < groups_x; ++g) {
    const int xa = g * s.block_x() - s.halo - s.input_lead();
    for (int x = xa; x < xa + s.input_width(); ++x) cols[std::clamp(x, 0, width - 1)] = 1;
  }
  std::vector<char> mask(static_cast<std::size_t>(width) * height, 0);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      mask[static_cast<std::size_t>(y) * width + x] = rows[y] && cols[x];
  return mask;
}

}  // namespace kperf
