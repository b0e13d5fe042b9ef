// Grid inputs and outputs: images (stb_image), .npy, Rodinia text grids, atomic file writes.
#include "io.hpp"

#include <fcntl.h>
#include <stb_image.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace kperf {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "kperf-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary directory: " +
                             std::string(std::strerror(errno)));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return ss.str();
}

bool has_image_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  static const char* kExts[] = {".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm",
                                ".pnm", ".tga", ".gif",  ".psd", ".hdr", ".pic"};
  return std::any_of(std::begin(kExts), std::end(kExts), [&](const char* e) { return ext == e; });
}

namespace {

// stb_image decodes some truncated files without complaint (binary PNM, baseline JPEG) and
// fills the missing pixels; these checks turn that into an error.
void check_not_truncated(const std::string& path, const std::string& bytes) {
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6')) {
    // Header: magic, width, height, maxval (comments allowed), one whitespace, then data.
    std::size_t pos = 2;
    long fields[3] = {0, 0, 0};
    for (long& field : fields) {
      while (pos < bytes.size() &&
             (std::isspace(static_cast<unsigned char>(bytes[pos])) || bytes[pos] == '#')) {
        if (bytes[pos] == '#')
          while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
        else
          ++pos;
      }
      while (pos < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[pos])) &&
             field < (1L << 30))
        field = field * 10 + (bytes[pos++] - '0');
    }
    const std::size_t channels = bytes[1] == '6' ? 3 : 1;
    const std::size_t depth = fields[2] > 255 ? 2 : 1;
    const std::size_t need = static_cast<std::size_t>(fields[0]) *
                             static_cast<std::size_t>(fields[1]) * channels * depth;
    if (pos + 1 + need > bytes.size())
      throw InputError(path + ": truncated image (" +
                       std::to_string(bytes.size() - std::min(bytes.size(), pos + 1)) + " of " +
                       std::to_string(need) + " pixel bytes)");
  }
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8) {
    // A complete JPEG ends its last scan (SOS, FFDA) with an end-of-image marker (FFD9).
    const auto sos = bytes.rfind("\xFF\xDA");
    const auto eoi = bytes.rfind("\xFF\xD9");
    if (sos == std::string::npos || eoi == std::string::npos || eoi < sos)
      throw InputError(path + ": truncated image (JPEG without end-of-image marker)");
  }
}

}  // namespace

std::string grid_elements_problem(long long width, long long height) {
  if (width * height <= kMaxGridElements) return std::string();
  return std::to_string(width) + "x" + std::to_string(height) + " is " +
         std::to_string(width * height) + " elements; kperf's kernels index a grid with 32-bit " +
         "integers, so at most " + std::to_string(kMaxGridElements) + " (46340x46340)";
}

Grid read_image(const std::string& path) { return decode_image(read_file(path), path); }

Grid decode_image(const std::string& bytes, const std::string& path) {
  if (bytes.empty()) throw InputError(path + ": empty file");
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX))
    throw InputError(path + ": file too large");
  int w = 0, h = 0, comp = 0;
  const auto* raw = reinterpret_cast<const stbi_uc*>(bytes.data());
  if (!stbi_info_from_memory(raw, static_cast<int>(bytes.size()), &w, &h, &comp))
    throw InputError(path + ": not a readable image (" + stbi_failure_reason() + ")");
  if (w <= 0 || h <= 0 || w > kMaxGridSide || h > kMaxGridSide ||
      static_cast<long long>(w) * h > kMaxImagePixels)
    throw InputError(path + ": image size " + std::to_string(w) + "x" + std::to_string(h) +
                     " is outside 1.." + std::to_string(kMaxGridSide) + " per side or above " +
                     std::to_string(kMaxImagePixels) + " pixels");
  check_not_truncated(path, bytes);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(raw, static_cast<int>(bytes.size()), &w, &h, &comp, 0),
      stbi_image_free);
  if (!pixels)
    throw InputError(path + ": corrupt or truncated image (" + stbi_failure_reason() + ")");
  Grid g(w, h);
  const stbi_uc* p = pixels.get();
  for (std::size_t i = 0; i < g.size(); ++i, p += comp) {
    // One or two channels are gray (+alpha); three or four are RGB(+alpha).
    g.data[i] = comp < 3 ? static_cast<float>(p[0])
                         : static_cast<float>(0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]);
  }
  return g;
}

namespace {

// Value of `key` in a .npy header dict such as {'descr': '<f4', 'shape': (3, 4), }.
std::string npy_field(const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return {};
  auto colon = header.find(':', k);
  if (colon == std::string::npos) return {};
  auto start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return {};
  const char open = header[start];
  if (open == '\'') {
    auto end = header.find('\'', start + 1);
    return end == std::string::npos ? std::string() : header.substr(start + 1, end - start - 1);
  }
  if (open == '(') {
    auto end = header.find(')', start);
    return end == std::string::npos ? std::string() : header.substr(start, end - start + 1);
  }
  auto end = header.find_first_of(",}", start);
  return end == std::string::npos ? std::string() : header.substr(start, end - start);
}

}  // namespace

Grid read_npy(const std::string& path) { return decode_npy(read_file(path), path); }

Grid decode_npy(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw InputError(path + ": not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(path + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    throw InputError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < offset + header_len) throw InputError(path + ": truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  const std::string descr = npy_field(header, "descr");
  const std::string fortran = npy_field(header, "fortran_order");
  const std::string shape = npy_field(header, "shape");
  std::size_t item;
  if (descr == "<f4") {
    item = 4;
  } else if (descr == "|u1" || descr == "<u1" || descr == "u1") {
    item = 1;
  } else if (descr == ">f4") {
    throw InputError(path + ": big-endian float32 (>f4) is not supported; save as '<f4'");
  } else {
    throw InputError(path + ": dtype '" + descr + "' is not supported (float32 '<f4' or uint8)");
  }
  if (fortran != "False")
    throw InputError(path + ": Fortran-order arrays are not supported; save in C order");
  // shape "(H, W)" exactly two positive integers.
  std::vector<long long> dims;
  {
    std::string inner = shape.size() >= 2 ? shape.substr(1, shape.size() - 2) : "";
    std::stringstream ss(inner);
    std::string part;
    while (std::getline(ss, part, ',')) {
      part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
      if (part.empty()) continue;
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(part.c_str(), &end, 10);
      if (*end != '\0' || errno != 0 || v < 0)
        throw InputError(path + ": malformed shape " + shape);
      dims.push_back(v);
    }
  }
  if (dims.size() != 2)
    throw InputError(path + ": array has rank " + std::to_string(dims.size()) +
                     ", expected a 2-D grid");
  if (dims[0] < 1 || dims[1] < 1 || dims[0] > kMaxGridSide || dims[1] > kMaxGridSide)
    throw InputError(path + ": shape " + shape + " is outside 1.." + std::to_string(kMaxGridSide) +
                     " per side");
  if (const std::string big = grid_elements_problem(dims[1], dims[0]); !big.empty())
    throw InputError(path + ": shape " + shape + ": " + big);
  // The data must be there before anything is allocated: the header alone can claim 16 GiB.
  const std::size_t elements =
      static_cast<std::size_t>(dims[0]) * static_cast<std::size_t>(dims[1]);
  const std::size_t data_offset = offset + header_len;
  if (bytes.size() < data_offset + elements * item)
    throw InputError(path + ": truncated data (" + std::to_string(bytes.size() - data_offset) +
                     " bytes for " + std::to_string(elements * item) + ")");
  Grid g(static_cast<int>(dims[1]), static_cast<int>(dims[0]));
  const char* src = bytes.data() + data_offset;
  if (item == 4) {
    std::memcpy(g.data.data(), src, g.size() * 4);
  } else {
    for (std::size_t i = 0; i < g.size(); ++i) g.data[i] = static_cast<unsigned char>(src[i]);
  }
  return g;
}

std::string encode_npy(const Grid& grid) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(grid.height) + ", " + std::to_string(grid.width) + "), }";
  // Pad so the data starts on a 64-byte boundary, header ending with '\n' (format v1.0).
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>((header.size() >> 8) & 0xff));
  out += header;
  out.append(reinterpret_cast<const char*>(grid.data.data()), grid.size() * sizeof(float));
  return out;
}

void write_npy(const std::string& path, const Grid& grid) {
  write_file_atomic(path, encode_npy(grid));
}

Grid read_rodinia(const std::string& path, int width, int height) {
  return parse_rodinia(read_file(path), path, width, height);
}

Grid parse_rodinia(const std::string& text, const std::string& path, int width, int height) {
  std::vector<float> values;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    std::size_t first = 0;
    while (first < line.size() && std::isspace(static_cast<unsigned char>(line[first]))) ++first;
    line = line.substr(first);
    if (line.empty()) {
      if (pos >= text.size()) break;  // Trailing newline.
      throw InputError(path + ":" + std::to_string(line_no) + ": empty line");
    }
    char* stop = nullptr;
    errno = 0;
    const float v = std::strtof(line.c_str(), &stop);
    if (stop == line.c_str() || *stop != '\0' || errno == ERANGE)
      throw InputError(path + ":" + std::to_string(line_no) + ": not a number: '" +
                       line.substr(0, 40) + "'");
    values.push_back(v);
    if (values.size() > static_cast<std::size_t>(kMaxGridElements))
      throw InputError(path + ": too many lines (more than " + std::to_string(kMaxGridElements) +
                       ", the most elements a grid may have)");
  }
  if (values.empty()) throw InputError(path + ": empty file");
  if (width <= 0 || height <= 0) {
    const auto side =
        static_cast<long long>(std::llround(std::sqrt(static_cast<double>(values.size()))));
    if (side * side != static_cast<long long>(values.size()))
      throw InputError(path + ": " + std::to_string(values.size()) +
                       " values is not a square grid; give --size WxH");
    width = height = static_cast<int>(side);
  }
  if (values.size() != static_cast<std::size_t>(width) * height)
    throw InputError(path + ": " + std::to_string(values.size()) + " values, expected " +
                     std::to_string(width) + "x" + std::to_string(height) + " = " +
                     std::to_string(static_cast<std::size_t>(width) * height));
  Grid g(width, height);
  g.data = std::move(values);
  return g;
}

std::string encode_rodinia(const Grid& grid) {
  std::string out;
  char buf[32];
  for (float v : grid.data) {
    std::snprintf(buf, sizeof buf, "%.9g\n", static_cast<double>(v));
    out += buf;
  }
  return out;
}

Grid resize_bilinear(const Grid& src, int width, int height) {
  if (src.width == width && src.height == height) return src;
  Grid dst(width, height);
  const double sx = static_cast<double>(src.width) / width;
  const double sy = static_cast<double>(src.height) / height;
  for (int y = 0; y < height; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, static_cast<double>(src.height - 1));
    const int y0 = static_cast<int>(fy);
    const int y1 = std::min(y0 + 1, src.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < width; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, static_cast<double>(src.width - 1));
      const int x0 = static_cast<int>(fx);
      const int x1 = std::min(x0 + 1, src.width - 1);
      const double wx = fx - x0;
      const double top = src.at(y0, x0) * (1 - wx) + src.at(y0, x1) * wx;
      const double bot = src.at(y1, x0) * (1 - wx) + src.at(y1, x1) * wx;
      dst.at(y, x) = static_cast<float>(top * (1 - wy) + bot * wy);
    }
  }
  return dst;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const fs::path target(path);
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot write (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(path + ": write failed (" + why + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": write failed (" + std::strerror(errno) + ")");
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename into place (" + why + ")");
  }
}

void check_writable(const std::string& path) {
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw std::runtime_error(path + ": is a directory");
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(path + ": directory " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::runtime_error(path + ": directory " + dir.string() + " is not writable");
  if (fs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0)
    throw std::runtime_error(path + ": file is not writable");
}

}  // namespace kperf
