// The grid `kperf run` measures when the command line names none: on a GPU, one its last-level
// cache cannot hold (measured, cache_probe.hpp), so that the main job shows what perforation buys
// against memory; elsewhere the default photo at its own size.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "cl_env.hpp"
#include "runner.hpp"

namespace kperf {

struct DefaultSize {
  std::optional<std::pair<int, int>> size;  // the size chosen, where it is not the input's own
  std::string line;                         // "size: ..., because ...": the summary's first line
  nlohmann::ordered_json json;              // the context's default_size block (null: not default)
};

// `sizes_given`: --size or a preset set the sizes (`given_text` names them); `input_given`:
// --input names the inputs; `own`: the default input's size. A restarted measuring process and a
// --resume reuse the choice made before (`earlier`: the resumed document's default_size block)
// rather than probe again, so that every process of one run measures the same grids.
DefaultSize choose_default_size(ClEnv& env, const std::string& kernel_root, bool sizes_given,
                                const std::string& given_text, bool input_given, bool dry_run,
                                std::pair<int, int> own, const nlohmann::json& earlier);

// kperf run's grid: choose_default_size for `cfg` (`sizes`: --size's or a preset's, described by
// `given_text`; `resumed`: the document --resume continues, whose choice is kept), set in `cfg`
// and `sizes`; the apps with their own inputs (hotspot) keep `largest`, the default input's own
// size, which becomes the largest grid the run allocates.
DefaultSize default_run_size(ClEnv& env, RunConfig& cfg, std::vector<std::pair<int, int>>& sizes,
                             const std::string& given_text, bool input_given, bool dry_run,
                             const std::string& resumed, std::pair<int, int>& largest);

}  // namespace kperf
