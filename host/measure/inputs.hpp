// The inputs of a run: --input values (files, directories, synthetic:NAME) expanded into
// sources, each loaded only when its turn comes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io.hpp"

namespace kperf {

// One image input, loaded only when its turn comes.
struct ImageSource {
  std::string name;       // used in result keys
  std::string path;       // image or .npy file; empty for synthetic
  std::string synthetic;  // generator name for synthetic inputs
};

// Expands --input values (files, directories, synthetic:NAME) into sources, in order.
// Throws InputError for a missing path or an empty directory.
std::vector<ImageSource> expand_inputs(const std::vector<std::string>& specs);

// Loads an image source, resized (bilinear) or generated at `size` when given.
Grid load_image_source(const ImageSource& src, std::optional<std::pair<int, int>> size);

// The grids of an app with its own input files (--temp and --power: Rodinia's text format, read
// at `size`, or .npy). Throws InputError naming the second file when their sizes differ.
std::pair<Grid, Grid> read_input_pair(const std::string& first, const std::string& second,
                                      std::optional<std::pair<int, int>> size);

// A file's name without directory and extension (an input's name in result keys).
std::string file_stem(const std::string& path);
bool is_npy(const std::string& path);
// Elements that are NaN or infinite (warned about: the metrics skip them).
std::size_t count_nonfinite(const std::vector<float>& values);

}  // namespace kperf
