// What the tuner's files share (tune.cpp: the search space and the tuner's bookkeeping;
// tune_stages.cpp: measuring a stage and judging its rows; tune_choices.cpp: the fronts, the
// choices and their held-out verdicts). Not part of kperf's interface.
#pragma once

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "phases.hpp"
#include "select_walk.hpp"
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

class SelectDeviceCanary;

// What a stage measures: per app, each variant's id with the variant and its launch shapes.
struct Tuner::Plan {
  std::map<std::string, std::map<std::string, std::pair<Variant, std::vector<WorkGroup>>>> apps;
  bool empty() const {
    for (const auto &[app, variants] : apps)
      if (!variants.empty()) return false;
    return true;
  }
};

// A budget's finalists among an app's points: those within it whose time lies within
// TuneConfig::kFinalistBand of the fastest (at most kMaxFinalists), fastest first.
std::vector<Tuner::Point> finalist_points(const std::vector<Tuner::Point> &points, double budget);

// kperf tune's answer, read off a Tuner's state: each app's points, front and choices with their
// held-out verdicts, the ladders and canaries of --select canary, and the document's blocks
// (tune_choices.cpp, tune_select.cpp).
class TuneReport {
 public:
  explicit TuneReport(const Tuner &t) : t_(t) {}
  using Point = Tuner::Point;
  using Choice = Tuner::Choice;
  using State = Tuner::State;

  std::vector<Point> points_of(const AppDescriptor &app) const;
  std::vector<Choice> choose(const AppDescriptor &app, const std::vector<Point> &points) const;
  nlohmann::ordered_json app_json(const AppDescriptor &app, const std::vector<Point> &points) const;
  void ranked_json(const AppDescriptor &app, const Choice &c, nlohmann::ordered_json &cj) const;
  nlohmann::ordered_json choices_json(const AppDescriptor &app, const std::vector<Choice> &choices,
                                      const nlohmann::ordered_json &points) const;
  nlohmann::ordered_json accurate_outputs_json(const AppDescriptor &app) const;
  double best_time_of(const std::string &app, const std::string &id) const;
  // A survivor's shapes that become points: its probe shape, its fastest and those near it
  // (TuneConfig::kShapeBand), each with the stage whose rows hold its training errors.
  std::vector<std::pair<WorkGroup, std::string>> point_shapes(const AppDescriptor &app,
                                                              const std::string &id,
                                                              const State &s) const;
  std::vector<Point> ladder_of(const AppDescriptor &app, const std::vector<Point> &points,
                               const Choice &choice) const;
  // The canary of every held-out input for every rung of an app's ladders, and the select blocks.
  void canary_json(const AppDescriptor &app, const std::vector<Choice> &choices,
                   const std::vector<std::vector<Point>> &ladders,
                   nlohmann::ordered_json &app_json) const;
  // --canary-calibrate (canary_calibration.cpp): the scale of the app's held-out margins from its
  // rungs' canaries on the training inputs (`device`'s where it takes them), `block` what it
  // computed them from.
  double calibrate_canary(const AppDescriptor &app, const std::map<std::string, LadderRung> &rungs,
                          CanaryInput in, SelectDeviceCanary *device,
                          nlohmann::ordered_json &block) const;
  // The device canary of the rungs, where --canary-on and the device allow it (else null);
  // `where` gets where the canaries run and why.
  std::unique_ptr<SelectDeviceCanary> device_canary(const std::map<std::string, LadderRung> &rungs,
                                                    CanaryPlacement &where) const;

 private:
  const Tuner &t_;
};

// How kperf tune measures a stage's plan (tune_stages.cpp, tune_lost_share.cpp): here, or under
// --devices spread over worker processes on the other devices, every other device also timing the
// accurate kernel so that its rows can be put on this one's scale; the rows go to the ledger. It
// also says what the sweep's climb times next (tune_rank.cpp).
class TuneStages {
 public:
  explicit TuneStages(Tuner &t) : t_(t) {}
  using Plan = Tuner::Plan;
  using Checkpoint = Tuner::Checkpoint;

  // A stage: measured here, or spread over the devices (as `baseline_stage` the other devices'
  // accurate kernel).
  bool stage(const std::string &name, StageInputs inputs, const Plan &plan, bool timed, bool save,
             const std::string &baseline_stage, const Checkpoint &checkpoint);
  // The part of a stage measured in this process.
  bool measure(const std::string &name, StageInputs inputs, const Plan &plan, bool timed, bool save,
               const std::set<std::string> &skip_keys, const Checkpoint &checkpoint);
  // The units a worker's request names (run_share's plan).
  Plan plan_of_request(const nlohmann::json &request) const;
  std::vector<ImageSource> inputs_of(StageInputs which) const;
  // The climb (tune_rank.cpp): the shapes a survivor wants timed next; a variant's fastest sweep
  // row on the first training input so far (its shape and time); and, before each round, the
  // survivors that stop climbing (TuneConfig::climb_band).
  std::vector<WorkGroup> climb_shapes(const AppDescriptor &app, const std::string &id,
                                      const Tuner::State &s) const;
  std::optional<std::pair<WorkGroup, double>> fastest_swept(const AppDescriptor &app,
                                                            const std::string &variant) const;
  void stop_distant_climbs(const std::string &origin);

 private:
  // A stage's plan split over the devices (shares[0]: this process's), and the worker process
  // that measures share `d` of it.
  std::vector<Plan> shares_of(const Plan &plan, const TuneSpace &space) const;
  std::unique_ptr<StageWorker> start_worker(const std::string &name, StageInputs inputs,
                                            const Plan &share, std::size_t d, bool timed, bool save,
                                            const std::string &baseline_stage,
                                            const TuneSpace &space) const;
  // The runner's configuration of a plan's apps, variants and shapes on these inputs.
  RunConfig plan_config(const Plan &plan, StageInputs inputs) const;
  // The rows of a worker killed past its time limit: every configuration of its share that it did
  // not return, run_failed with `result.lost` as the reason, added to `result.rows`.
  void add_unmeasured(const StageWorker &worker, StageWorker::Result &result);
  Tuner &t_;
};

}  // namespace kperf
