// Grid inputs and outputs: images (stb_image), .npy, Rodinia text grids, atomic file writes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kperf {

// A row-major 2-D float32 grid, width W (x, columns) by height H (y, rows).
struct Grid {
  int width = 0;
  int height = 0;
  std::vector<float> data;

  Grid() = default;
  Grid(int w, int h, float fill = 0.0f)
      : width(w),
        height(h),
        data(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), fill) {}
  std::size_t size() const { return data.size(); }
  float& at(int y, int x) { return data[static_cast<std::size_t>(y) * width + x]; }
  float at(int y, int x) const { return data[static_cast<std::size_t>(y) * width + x]; }
};

// A fresh private directory under the system's temporary one, removed with its contents at scope
// exit. Throws std::runtime_error when it cannot be made.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A user-facing input problem: the message names the file and what is wrong with it.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest side accepted for any input or generated grid (guards against absurd sizes
// before anything is allocated).
constexpr int kMaxGridSide = 1 << 16;
// Most elements in any grid: the kernels index a grid's elements (and the error metrics' loops
// step through them) with 32-bit int, so a grid must have at most INT32_MAX elements (46340 x
// 46340 fits, 46341 x 46341 does not). Every size is refused above it before anything runs.
constexpr long long kMaxGridElements = 2147483647;
// Why a width x height grid is too large to index ("" when it is not): one sentence naming the
// element count and the limit.
std::string grid_elements_problem(long long width, long long height);
// Largest image accepted, in pixels (16384^2): a small compressed file can claim a huge size,
// and its decode buffer is allocated before the data is seen.
constexpr long long kMaxImagePixels = 1LL << 28;

// Image (PNG, JPEG, BMP, PGM/PPM, TGA, ...) as grayscale luminance 0.299R+0.587G+0.114B in
// [0, 255].
Grid read_image(const std::string& path);
// The same from bytes already in memory; `name` labels error messages (fuzzing seam).
Grid decode_image(const std::string& bytes, const std::string& name);
bool has_image_extension(const std::string& path);

// 2-D C-order .npy of little-endian float32 or uint8, read as-is.
Grid read_npy(const std::string& path);
Grid decode_npy(const std::string& bytes, const std::string& name);
std::string encode_npy(const Grid& grid);
void write_npy(const std::string& path, const Grid& grid);  // atomic

// Rodinia hotspot text grid: one value per line, row-major. With width/height 0 the grid
// must be square and its side is inferred from the line count.
Grid read_rodinia(const std::string& path, int width = 0, int height = 0);
Grid parse_rodinia(const std::string& text, const std::string& name, int width = 0, int height = 0);
std::string encode_rodinia(const Grid& grid);

// Bilinear resize with half-pixel centres (OpenCV INTER_LINEAR for upscaling).
Grid resize_bilinear(const Grid& src, int width, int height);

// Reads a whole file; throws InputError naming the file when it cannot.
std::string read_file(const std::string& path);

// Writes `bytes` to a temporary file beside `path`, then renames it over `path`, so readers
// see either the old file or the whole new one. Throws std::runtime_error on failure.
void write_file_atomic(const std::string& path, const std::string& bytes);

// Throws std::runtime_error when a file cannot be created at `path` (checked before a run).
void check_writable(const std::string& path);

}  // namespace kperf
