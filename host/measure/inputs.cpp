// Expanding and loading the inputs of a run.
#include "inputs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>

#include "synthetic.hpp"

namespace kperf {

namespace fs = std::filesystem;

std::string file_stem(const std::string& path) { return fs::path(path).stem().string(); }

bool is_npy(const std::string& path) { return fs::path(path).extension() == ".npy"; }

std::pair<Grid, Grid> read_input_pair(const std::string& first, const std::string& second,
                                      std::optional<std::pair<int, int>> size) {
  int width = 0, height = 0;
  if (size) std::tie(width, height) = *size;
  auto load = [&](const std::string& p) {
    return is_npy(p) ? read_npy(p) : read_rodinia(p, width, height);
  };
  std::pair<Grid, Grid> grids{load(first), load(second)};
  const Grid &t = grids.first, &p = grids.second;
  if (t.width != p.width || t.height != p.height)
    throw InputError(second + ": power grid is " + std::to_string(p.width) + "x" +
                     std::to_string(p.height) + " but temperature grid " + first + " is " +
                     std::to_string(t.width) + "x" + std::to_string(t.height));
  return grids;
}

std::size_t count_nonfinite(const std::vector<float>& values) {
  return static_cast<std::size_t>(
      std::count_if(values.begin(), values.end(), [](float x) { return !std::isfinite(x); }));
}

std::vector<ImageSource> expand_inputs(const std::vector<std::string>& specs) {
  std::vector<ImageSource> out;
  for (const auto& spec : specs) {
    if (spec.rfind("synthetic:", 0) == 0) {
      const std::string name = spec.substr(10);
      if (name == "all") {
        for (const auto& n : synthetic_image_names()) out.push_back({"synthetic-" + n, "", n});
        continue;
      }
      const auto& names = synthetic_image_names();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string valid;
        for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
        throw InputError("unknown synthetic input '" + spec + "' (valid: synthetic:" + valid +
                         ", synthetic:all)");
      }
      out.push_back({"synthetic-" + name, "", name});
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(spec, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(spec, ec))
        if (entry.is_regular_file() &&
            (has_image_extension(entry.path().string()) || is_npy(entry.path().string())))
          files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(spec + ": directory holds no image or .npy file");
      for (const auto& f : files) out.push_back({file_stem(f), f, ""});
      continue;
    }
    if (!fs::exists(spec, ec)) throw InputError(spec + ": no such file or directory");
    if (!has_image_extension(spec) && !is_npy(spec))
      throw InputError(spec +
                       ": unknown input type (expected an image, a .npy file, a directory "
                       "or synthetic:NAME)");
    out.push_back({file_stem(spec), spec, ""});
  }
  return out;
}

Grid load_image_source(const ImageSource& src, std::optional<std::pair<int, int>> size) {
  if (!src.synthetic.empty()) {
    const auto [w, h] = size.value_or(std::make_pair(512, 512));
    return make_synthetic_image(src.synthetic, w, h);
  }
  Grid g = is_npy(src.path) ? read_npy(src.path) : read_image(src.path);
  if (size) g = resize_bilinear(g, size->first, size->second);
  return g;
}

}  // namespace kperf
