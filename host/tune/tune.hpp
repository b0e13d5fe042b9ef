// kperf tune (SPEC 12): searches the approximation space for the fastest
// configuration whose training error stays within a budget, and checks that
// choice on held-out test inputs.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "energy.hpp"
#include "input_canary.hpp"
#include "kernel_axes.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "schemes.hpp"
#include "tune_devices.hpp"

namespace kperf {

// The p-th percentile (p in [0, 100]) with linear interpolation between order
// statistics (numpy's default). Throws std::invalid_argument on an empty list.
double percentile(std::vector<double> values, double p);

// A configuration as the tuner ranks it: median time and training error (both
// minimised).
struct FrontPoint {
  double time = 0;
  double error = 0;
};
// Indices of the Pareto-optimal points, by ascending time. A point is dropped
// when another is no worse in both and better in one; of exact duplicates only
// the first is kept.
std::vector<std::size_t> pareto_indices(const std::vector<FrontPoint> &points);
// The points no other beats by more than `band` in time at no more error, in input order: the
// front and those within the band of it. With band 0, the front with its duplicates and the
// points of equal time to a front point's.
std::vector<std::size_t> near_front_indices(const std::vector<FrontPoint> &points, double band);
// --climb-band's value: a fraction above 0, or "all" (infinity); anything else throws
// std::invalid_argument with one line.
double climb_band_from_text(const std::string &text);

// The variant's identity in result keys: "rows:2/nn/load:global/f16"
// (scheme/recon[/axes]).
std::string variant_id(const Variant &v);
// The same identity read back from a row's key.
std::string variant_id(const ResultRow &row);
// The approximation family (SYprox Table 3 and kperf's extra axes): "accurate",
// "input perforation", "host perforation", "output approximation", "mixed
// precision", "launch perforation", a kernel axis's family ("relaxed barrier",
// "loop perforation"), or "combination" when more than one applies.
std::string family_of(const Variant &v);

// The axes the tuner searches, as groups of values; a value of one group is
// applied to a variant without touching the others. Input perforation carries
// its reconstruction and where it happens (device or host) since they only
// exist together.
// After the four structural groups, every kernel axis that kperf tune searches
// (kernel_axes.hpp: a tune default) is a group of its own.
struct AxisGroup {
  int id = 0;
  // The structural groups are the rows of tune.cpp's group table (a static_assert holds the two
  // together); the kernel axes follow them.
  static constexpr int kStructural = 4;
  static const AxisGroup kInput, kLoad, kOutput, kPrecision;
  static AxisGroup kernel(std::size_t axis) { return {kStructural + static_cast<int>(axis)}; }
  bool is_kernel() const { return id >= kStructural; }
  std::size_t kernel_axis() const { return static_cast<std::size_t>(id - kStructural); }
  bool operator<(AxisGroup o) const { return id < o.id; }
  bool operator==(AxisGroup o) const { return id == o.id; }
};
inline const AxisGroup AxisGroup::kInput{0}, AxisGroup::kLoad{1}, AxisGroup::kOutput{2},
    AxisGroup::kPrecision{3};
// The structural groups, then the searched kernel axes.
std::vector<AxisGroup> all_groups();
// "input", "load", "output", "precision", or the kernel axis's flag ("relax").
std::string group_name(AxisGroup group);
struct TuneSpace {
  std::map<AxisGroup, std::vector<Variant>> values;  // donors: only their group's fields count
};
// The groups of an axes specification (lists as on the command line). Throws
// std::invalid_argument for a bad value. Host perforation joins only rows:K and
// cols:K.
TuneSpace make_space(const AxesSpec &axes);
// `base` with `donor`'s fields of `group`.
Variant with_group(Variant base, AxisGroup group, const Variant &donor);
// The accurate configuration with every axis at its default.
Variant default_variant();
// The single-group deviations from the default (the default itself first): the
// atoms whose errors decide what is combined.
std::vector<Variant> atoms_of(const TuneSpace &space);
// A variant as, per group of all_groups(), the index of its value among the space's donors (-1:
// the default's): how a tune names a variant to a worker process, which builds the same space
// from the same command line. Throws std::invalid_argument when the space cannot name it.
std::vector<int> donor_indices(const TuneSpace &space, const Variant &v);
Variant from_donor_indices(const TuneSpace &space, const std::vector<int> &indices);

// An atom's measured standing, for building combinations.
struct AtomStanding {
  AxisGroup group;
  Variant variant;
  double time = 0;   // median at its best launch shape
  double error = 0;  // percentile training error at its probe shape
};
// A proposed combination with what its atoms predict.
struct Combination {
  Variant variant;
  double predicted_time = 0;   // base time x the product of the atoms' time ratios
  double predicted_error = 0;  // the sum of the atoms' errors
};
// The combinations of every group's Pareto-optimal atoms (time vs error, the
// default value included) that change at least two groups, whose predicted
// error is within `max_error`, fastest predicted first, at most `limit`.
std::vector<Combination> propose_combinations(const std::vector<AtomStanding> &atoms,
                                              double base_time, double max_error,
                                              std::size_t limit);

// The launch shapes of `shapes` one step from `wg`: a different work-group (x and y together),
// vec or py, the other two kept. The sweep climbs along them from a variant's starting shapes.
std::vector<WorkGroup> neighbour_shapes(const std::vector<WorkGroup> &shapes, const WorkGroup &wg);

// A finalist of one budget as the rank stage measured it.
struct RankedCandidate {
  double time = 0;   // median of the interleaved rounds
  double error = 0;  // percentile training error
};
// The stable rule: of the candidates within `tolerance` (a fraction) of the fastest, the one of
// lowest training error; equal errors go to the faster. None when `candidates` is empty.
std::optional<std::size_t> stable_choice(const std::vector<RankedCandidate> &candidates,
                                         double tolerance);

struct TuneConfig {
  std::vector<const AppDescriptor *> apps;
  std::vector<double> budgets;  // ascending
  std::vector<ImageSource> train, test;
  std::optional<std::pair<int, int>> size;
  AxesSpec axes;
  std::vector<WorkGroup> shapes;
  int warmup = 10, reps = 30;
  // --cache: the timed stages flush the device's cache before every sample (cold), or time
  // back-to-back launches (warm). auto is cold on a GPU and warm on a CPU, where the flush costs
  // more than the kernels. Warm timings of a grid that fits a GPU's L2 move with where its buffers
  // landed (on an H100 at 2048^2 a speedup moved 10 % between processes, 1 % cold).
  std::string cache = "auto";
  bool cold = false;            // what `cache` resolved to on the device
  std::size_t flush_bytes = 0;  // filled before each cold sample
  double percentile = 95;
  // What a configuration's time is: its kernel launches (the papers' measure), or end to end
  // (--objective end-to-end: host packing or conversion, upload, launches and download, as
  // --transfers times them), so that host perforation and host-converted half storage pay for
  // the host work their kernel time leaves out.
  bool end_to_end = false;
  // --objective energy: ranked by joules per launch (the points' "time_ns" then hold nJ), which
  // needs a counter (--energy). With --energy the timed stages measure energy either way.
  bool energy_objective = false;
  std::string energy_spec = "none";
  EnergyCounter *energy = nullptr;
  EnergyOptions energy_options;
  std::string energy_absent_reason;
  std::size_t max_combinations = 32;
  // --screen-combinations M (0: off; the command's default is three times max_combinations):
  // the M fastest predicted combinations are timed at their probe shape on the first training
  // input, and only the max_combinations fastest measured go on. Predictions multiply the atoms'
  // time ratios; where many lie within a few percent of each other, which of them fall inside
  // max_combinations is the atoms' noise. An app with no more than max_combinations combinations
  // is not screened.
  std::size_t screen_combinations = 0;
  // --sweep every: each survivor timed at every launch shape. The default (climb) times it at
  // its probe shape and the accurate kernel's best (a combination also at its atoms' best), then
  // at the neighbours (neighbour_shapes) of its fastest shape until none is faster; the two
  // baselines are always timed at every shape.
  bool sweep_every_shape = false;
  // --climb-band: a survivor climbs on only while its fastest time so far lies within this
  // fraction of the fastest of any budget it meets (its probe error within it; the accurate
  // kernel meets them all); the others keep the shapes they ran at. Leaders only get faster, so
  // a climb once stopped never would have gone on. Infinity (`all`): every survivor climbs.
  double climb_band = 0.25;
  // The rank stage: per budget, the points within it whose sweep time lies within
  // kFinalistBand of the fastest (at most kMaxFinalists) are timed again with the accurate
  // kernel and Paraprox's baseline at their best shapes, interleaved in kRankRounds rounds of
  // rank_reps() launches in all; the choice is stable_choice() with --tie-tolerance.
  double tie_tolerance = 0.015;
  static constexpr double kFinalistBand = 0.10;
  static constexpr std::size_t kMaxFinalists = 8;
  // Beside its fastest shape, up to kNearShapes more of a survivor's shapes whose sweep time lies
  // within kShapeBand of its fastest are confirmed and become points: one sample a shape differs
  // between two runs by up to 3.5 % (p90; 1.2 % median) on an H200, so which of them is fastest
  // is the rank stage's to say, not the sweep's.
  static constexpr double kShapeBand = 0.03;
  static constexpr std::size_t kNearShapes = 2;
  // An axis group's atoms that combinations are made of: its front and the atoms within
  // kFrontBand of it in time (near_front_indices), for the same noise: which of two atoms of
  // almost equal time and error is on the front is one sample's to say.
  static constexpr double kFrontBand = 0.03;
  static constexpr int kRankRounds = 6;
  int rank_reps() const { return 3 * reps; }
  // --select (SPEC 15): the static choice is always made; with canary each budget also keeps a
  // ladder of the front's points (tune_select.cpp), timed with the accurate kernel on every
  // held-out input (stage "ladder"), and a canary of each held-out input picks its rung.
  bool select_canary = false;
  std::size_t ladder = 4;  // --ladder K: configurations besides the accurate kernel
  CanarySettings canary;
  // --canary-on auto|device|host: where the canaries run (select_device.hpp); the device canary
  // costs launches of a few hundred work-groups where the host canary costs milliseconds.
  std::string canary_on = "auto";
  // --canary-calibrate on|off: each app's margins scaled by a split-conformal quantile of its
  // rungs' canaries on the training inputs (canary_calibration.hpp); off: the canary's own.
  bool canary_calibrate = true;
  // A rung's training error may exceed the budget up to this factor: on easier inputs it holds.
  static constexpr double kLadderReach = 2;
  std::string kernel_root, extra_build_options, outputs_dir;
  std::string compile_worker_exe;  // see RunConfig
  bool progress = false;
  // kperf tune --devices: the devices after the first (the Tuner's own ClEnv), each a "P:D"
  // selector on which a worker process measures a share of every stage (tune_devices.hpp), and
  // the tune command's arguments, which the workers read again to set themselves up alike.
  std::vector<std::string> worker_devices;
  std::vector<std::string> command_args;
  bool multi_device() const { return !worker_devices.empty(); }
};

// Which inputs a stage measures.
enum class StageInputs { kTrain, kFirstTrain, kTest };

// A measured row and the stage that measured it (with --select canary also "ladder": every rung
// timed on every held-out input): "screen" (with --screen-combinations: a
// combination timed at its probe shape on the first training input), "probe" (error on every
// training input at one launch shape), "sweep" (timed over every launch shape
// on the first training input), "confirm" (error on every training input at the
// best shape), "test" (held-out inputs).
// Under --devices, the baselines that another device measures for its own timed rows are stage
// "sweep-baseline:atom", "sweep-baseline:combination" or "screen-baseline".
struct TuneRow {
  std::string stage;
  ResultRow row;
  int device = 0;  // position in --devices of the device that measured it (0: the first)
};
// A tune document's row: the result row with its stage and, off the first device, device_slot.
nlohmann::ordered_json to_json(const TuneRow &r);
TuneRow tune_row_from_json(const nlohmann::json &j);  // throws nlohmann::json::exception

class TuneLedger;

class Tuner {
 public:
  // `resumed`: rows of an earlier, interrupted run of the same command; not
  // measured again.
  Tuner(ClEnv &env, TuneConfig config, std::vector<TuneRow> resumed = {});
  ~Tuner();

  // Runs every stage; `checkpoint` receives the rows now and then. False when
  // interrupted.
  bool run(const std::function<void(const std::vector<TuneRow> &)> &checkpoint);

  // A worker process's share of one stage (tune_devices.hpp): the units of `request`, measured
  // on this Tuner's device; rows() holds them. False when interrupted.
  bool run_share(const nlohmann::json &request,
                 const std::function<void(const std::vector<TuneRow> &)> &checkpoint);

  const std::vector<TuneRow> &rows() const;
  // Per app: the points, the Pareto front, what was pruned and why, and per
  // budget the choice with its test verdict. Valid after run() (partial after
  // an interruption).
  nlohmann::ordered_json summary_json() const { return summary_; }
  // Seconds per stage and the runner's phases summed over the stages.
  nlohmann::ordered_json phases_json() const;
  double copy_gbps() const { return copy_gbps_; }
  // The journal said to stop (fault_journal.hpp): run() returned false, and nothing more ran.
  bool stopped() const { return stopped_; }

  // The search's state, as its collaborators (tune_internal.hpp) read it.
  friend class TuneReport;  // kperf tune's answer, read off this state (tune_internal.hpp)
  friend class TuneStages;  // how a stage's plan is measured (tune_internal.hpp)
  struct Plan;              // per app, per variant: the launch shapes to run
  // What the tuner knows of one variant of one app.
  struct State {
    Variant v;
    std::string origin;  // "atom:<group>" or "combination"
    std::optional<WorkGroup> probe, best;
    double probe_error = std::numeric_limits<double>::quiet_NaN();
    double best_time = 0;
    std::string problem;  // why it left the search
    std::string pruned_at;
    bool swept = false;
    bool climb_stopped = false;  // outside climb_band of every budget it meets
    std::optional<Combination> proposal;
  };
  // A survivor at one launch shape: its time on the first training input, its errors on all.
  struct Point {
    std::string id;
    WorkGroup wg;
    double time = 0, cv = 0;
    std::vector<double> errors;
    double error = 0;
    std::string key;
    int device = 0;  // where it was timed
  };
  struct Choice {
    double budget;
    std::optional<Point> point;
    // The finalists the rank stage timed for this budget, each with its median there (ns); the
    // choice is one of them when any was timed.
    std::vector<std::pair<Point, double>> finalists;
    std::optional<double> ranked_time;
  };
  using Checkpoint = std::function<void(const std::vector<TuneRow> &)>;

 private:
  void set_baselines();
  // The searched values with Paraprox's baseline among the load values: the donors by which a
  // variant is named to a worker process.
  TuneSpace donor_space() const;

  // The stages' bookkeeping (tune.cpp, in the order run() calls them).
  State *add(const AppDescriptor &app, const Variant &v, const std::string &origin);
  std::optional<WorkGroup> probe_shape(const AppDescriptor &app, const Variant &v,
                                       std::string &why) const;
  void add_atoms(const TuneSpace &space);
  void add_combinations();
  // The live variants of an origin ("atom", "combination") at their probe shape or every shape.
  Plan plan_of(const std::string &origin_prefix, bool every_shape);
  // The sweep of an origin's survivors (tune_rank.cpp): every shape, or the climb.
  bool sweep(const std::string &origin, const std::string &baseline, const Checkpoint &checkpoint);
  Plan confirm_plan();
  // The finalists of every budget with both baselines at their best shapes, and their times in
  // the rank stage (on the device that measured them).
  Plan rank_plan(const std::map<std::string, std::vector<Point>> &points) const;
  void judge_probes(const std::string &origin_prefix);
  void judge_sweeps(const std::string &origin_prefix);
  void judge_screen();
  // A variant with a device_fault row in this stage leaves the search, as a pruned one does.
  void judge_faults(const std::string &stage);
  bool screens(const AppDescriptor &app);
  Plan test_plan(const std::map<std::string, std::vector<Choice>> &choices);

  // --select canary (tune_select.cpp): per app, per budget, the ladder's rungs fastest first,
  // the accurate kernel last.
  using Ladders = std::map<std::string, std::vector<std::vector<Point>>>;
  bool select_by_canary(const std::map<std::string, std::vector<Choice>> &choices,
                        nlohmann::ordered_json &apps_json, const Checkpoint &checkpoint);
  Plan ladder_plan(const Ladders &ladders,
                   const std::map<std::string, std::vector<Choice>> &choices) const;

  ClEnv &env_;
  TuneConfig cfg_;
  std::unique_ptr<TuneLedger> ledger_;  // every row measured, and the views the search reads
  std::map<std::string, double> stage_s_, runner_phase_s_;
  // This process's compile workers over every stage: processes (the most at once), programs,
  // starts and seconds (summed).
  std::map<std::string, double> compile_workers_;
  nlohmann::ordered_json summary_;
  double copy_gbps_ = 0;
  std::shared_ptr<TruthCache> truths_;  // every stage's Runner computes an input's truth once
  // Every stage's Runner uploads an input once per stored layout, and each truth once.
  std::shared_ptr<DeviceResidency> residency_;
  // The search's state: per app, per variant id, in insertion order.
  std::map<std::string, std::map<std::string, State>> states_;
  std::map<std::string, std::vector<std::string>> order_;
  Variant base_, paraprox_;  // the accurate kernel and Paraprox's baseline (--load global)
  bool stopped_ = false;
  std::string base_id_, paraprox_id_;
};

}  // namespace kperf
