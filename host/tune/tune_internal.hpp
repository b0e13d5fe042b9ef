// What the tuner's files share (tune.cpp: the search space and the tuner's bookkeeping;
// tune_stages.cpp: measuring a stage and judging its rows; tune_choices.cpp: the fronts, the
// choices and their held-out verdicts). Not part of kperf's interface.
#pragma once

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "phases.hpp"
#include "tune.hpp"

namespace kperf::tune_detail {

inline std::string shape_label(const WorkGroup &wg) { return wg_label(wg.x, wg.y, wg.vec, wg.py); }

// What a stage request calls its inputs.
inline constexpr std::pair<StageInputs, const char *> kStageInputNames[] = {
    {StageInputs::kTrain, "train"},
    {StageInputs::kFirstTrain, "first-train"},
    {StageInputs::kTest, "test"}};

inline const char *inputs_name(StageInputs which) {
  for (const auto &[inputs, name] : kStageInputNames)
    if (inputs == which) return name;
  return "";
}

inline StageInputs inputs_from_name(const std::string &text) {
  for (const auto &[inputs, name] : kStageInputNames)
    if (text == name) return inputs;
  throw std::invalid_argument("unknown stage inputs '" + text + "'");
}

}  // namespace kperf::tune_detail

namespace kperf {

// What a stage measures: per app, each variant's id with the variant and its launch shapes.
struct Tuner::Plan {
  std::map<std::string, std::map<std::string, std::pair<Variant, std::vector<WorkGroup>>>> apps;
  bool empty() const {
    for (const auto &[app, variants] : apps)
      if (!variants.empty()) return false;
    return true;
  }
};

}  // namespace kperf
