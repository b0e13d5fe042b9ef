// kperf tune (SPEC 12): atoms probed, pruned and swept, their fronts combined,
// the survivors confirmed on every training input, one choice per budget
// checked on held-out inputs.
#include "tune.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "fault_journal.hpp"
#include "kernel_axes.hpp"
#include "stats.hpp"
#include "tune_internal.hpp"

namespace kperf {

using namespace tune_detail;

double percentile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile of an empty list");
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

std::string variant_id(const Variant &v) { return v.id(); }

std::string variant_id(const ResultRow &row) { return row.variant; }

std::string family_of(const Variant &v) { return v.family(); }

std::vector<AxisGroup> all_groups() {
  std::vector<AxisGroup> groups;
  for (int id = 0; id < AxisGroup::kStructural; ++id) groups.push_back(AxisGroup{id});
  for (std::size_t i = 0; i < kernel_axes().size(); ++i)
    if (kernel_axes()[i].tune_default) groups.push_back(AxisGroup::kernel(i));
  return groups;
}

namespace {

// The tuner's structural groups, in AxisGroup order: which fields of a donor variant a group's
// value carries, which lists of the command line it reads, and which values it admits. The input
// scheme travels with its reconstruction and perforation site, the output scheme with its
// reconstruction and fill.
struct StructuralGroup {
  const char *name;
  void (*take)(Variant &base, const Variant &donor);
  void (*select)(AxesSpec &one, const AxesSpec &axes);
  bool (*admits)(const Variant &v);
};
constexpr StructuralGroup kStructuralGroups[] = {
    {"input",
     [](Variant &b, const Variant &d) {
       b.scheme = d.scheme;
       b.skip = d.skip;
       b.recon = d.recon;
       b.host_perforate = d.host_perforate;
     },
     [](AxesSpec &s, const AxesSpec &a) {
       s.schemes = a.schemes;
       s.recons = a.recons;
       s.perforates = a.perforates;
     },
     // Host perforation packs whole lines: rows:K and cols:K only.
     [](const Variant &v) {
       const std::string family = v.scheme->family;
       return !v.host_perforate || family == "rows" || family == "cols";
     }},
    {"load", [](Variant &b, const Variant &d) { b.load = d.load; },
     [](AxesSpec &s, const AxesSpec &a) { s.loads = a.loads; },
     [](const Variant &) { return true; }},
    {"output",
     [](Variant &b, const Variant &d) {
       b.output = d.output;
       b.output_recon = d.output_recon;
       b.output_fill = d.output_fill;
     },
     [](AxesSpec &s, const AxesSpec &a) {
       s.outputs = a.outputs;
       s.output_recons = a.output_recons;
       s.output_fills = a.output_fills;
     },
     [](const Variant &) { return true; }},
    {"precision", [](Variant &b, const Variant &d) { b.precision = d.precision; },
     [](AxesSpec &s, const AxesSpec &a) { s.precisions = a.precisions; },
     [](const Variant &) { return true; }},
};
static_assert(std::size(kStructuralGroups) == AxisGroup::kStructural,
              "AxisGroup::kStructural counts the rows of kStructuralGroups");

}  // namespace

std::string group_name(AxisGroup group) {
  if (group.is_kernel()) return kernel_axes()[group.kernel_axis()].flag;
  return kStructuralGroups[group.id].name;
}

Variant default_variant() {
  AxesSpec axes;
  axes.schemes = "accurate";
  return parse_variants(axes).front();
}

Variant with_group(Variant base, AxisGroup group, const Variant &donor) {
  if (group.is_kernel()) {
    const std::size_t axis = group.kernel_axis();
    if (base.kernel_values.size() <= axis) base.kernel_values.resize(axis + 1, 0);
    base.kernel_values[axis] = donor.kernel_value(axis);
  } else {
    kStructuralGroups[group.id].take(base, donor);
  }
  return base;
}

TuneSpace make_space(const AxesSpec &axes) {
  TuneSpace space;
  AxesSpec one;  // every axis at its default but the one being read
  one.schemes = "accurate";
  auto read = [&](AxesSpec spec) { return parse_variants(spec); };
  for (int id = 0; id < AxisGroup::kStructural; ++id) {
    const StructuralGroup &group = kStructuralGroups[id];
    AxesSpec s = one;
    group.select(s, axes);
    std::vector<Variant> &values = space.values[AxisGroup{id}];
    for (const auto &v : read(s))
      if (group.admits(v)) values.push_back(v);
  }
  for (const AxisGroup g : all_groups()) {
    if (!g.is_kernel()) continue;
    const char *flag = kernel_axes()[g.kernel_axis()].flag;
    const auto list = axes.kernel.find(flag);
    if (list == axes.kernel.end()) continue;
    AxesSpec s = one;
    s.kernel[flag] = list->second;
    space.values[g] = read(s);
  }
  return space;
}

std::vector<Variant> atoms_of(const TuneSpace &space) {
  const Variant base = default_variant();
  std::vector<Variant> out = {base};
  std::set<std::string> seen = {variant_id(base)};
  for (const auto &[group, donors] : space.values)
    for (const auto &donor : donors) {
      const Variant v = with_group(base, group, donor);
      if (seen.insert(variant_id(v)).second) out.push_back(v);
    }
  return out;
}

std::vector<int> donor_indices(const TuneSpace &space, const Variant &v) {
  const std::string id = variant_id(v);
  std::vector<int> indices;
  for (const AxisGroup g : all_groups()) {
    int index = -1;
    if (const auto it = space.values.find(g); it != space.values.end())
      for (std::size_t i = 0; i < it->second.size() && index < 0; ++i)
        if (variant_id(with_group(v, g, it->second[i])) == id) index = static_cast<int>(i);
    indices.push_back(index);
  }
  if (variant_id(from_donor_indices(space, indices)) != id)
    throw std::invalid_argument("variant " + id + " is not made of the searched values");
  return indices;
}

Variant from_donor_indices(const TuneSpace &space, const std::vector<int> &indices) {
  const std::vector<AxisGroup> groups = all_groups();
  if (indices.size() != groups.size())
    throw std::invalid_argument("a variant of " + std::to_string(indices.size()) +
                                " axis groups (this kperf has " + std::to_string(groups.size()) +
                                ")");
  Variant v = default_variant();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (indices[i] < 0) continue;
    const auto it = space.values.find(groups[i]);
    if (it == space.values.end() || static_cast<std::size_t>(indices[i]) >= it->second.size())
      throw std::invalid_argument("no value " + std::to_string(indices[i]) + " in axis group " +
                                  group_name(groups[i]));
    v = with_group(v, groups[i], it->second[indices[i]]);
  }
  return v;
}

// Per app, per variant id: the variant and the launch shapes a stage runs it
// at.
nlohmann::ordered_json to_json(const TuneRow &r) {
  nlohmann::ordered_json j = to_json(r.row);
  j["stage"] = r.stage;
  if (r.device != 0) j["device_slot"] = r.device;  // its position in --devices
  return j;
}

TuneRow tune_row_from_json(const nlohmann::json &j) {
  return {j.at("stage").get<std::string>(), row_from_json(j), j.value("device_slot", 0)};
}

Tuner::Tuner(ClEnv &env, TuneConfig config, std::vector<TuneRow> resumed)
    : env_(env),
      cfg_(std::move(config)),
      rows_(std::move(resumed)),
      truths_(std::make_shared<TruthCache>()) {
  // A quarter of the machine's memory at most: at 2048^2 a truth is 32 MiB.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  truths_->max_bytes = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) / 4 * page : 0;
  for (std::size_t i = 0; i < rows_.size(); ++i) index(i);
}

namespace {

bool is_baseline_stage(const std::string &stage) { return stage.rfind("sweep-baseline:", 0) == 0; }

std::string index_key(const std::string &stage, const std::string &app, const std::string &id,
                      const std::string &shape, const std::string &input, int device) {
  // A baseline stage holds the accurate kernel once per device; every other stage measures a
  // configuration on one device only.
  return stage + "|" + app + "|" + id + "|" + shape + "|" + input +
         (is_baseline_stage(stage) ? "|" + std::to_string(device) : std::string());
}

}  // namespace

void Tuner::index(std::size_t i) {
  const TuneRow &t = rows_[i];
  const ResultRow &r = t.row;
  index_[index_key(t.stage, r.app, variant_id(r), wg_label(r.wg_x, r.wg_y, r.vec, r.py),
                   r.input_name, t.device)] = i;
}

const TuneRow *Tuner::find(const std::string &stage, const std::string &app, const std::string &id,
                           const std::string &shape, const std::string &input, int device) const {
  const auto it = index_.find(index_key(stage, app, id, shape, input, device));
  return it == index_.end() ? nullptr : &rows_[it->second];
}

std::optional<TimingStats> Tuner::raw_objective_time(const ResultRow &row) const {
  if (cfg_.energy_objective) {
    if (!row.energy.is_object()) return std::nullopt;
    // Nanojoules per launch in the time's place; the spread over windows in the cv's.
    TimingStats s;
    s.median = s.mean = 1e9 * row.energy.value("j_per_launch", 0.0);
    s.min = 1e9 * row.energy.value("j_per_launch_min", 0.0);
    s.max = 1e9 * row.energy.value("j_per_launch_max", 0.0);
    s.cv = s.median > 0 ? (s.max - s.min) / s.median : 0;
    return s;
  }
  if (!cfg_.end_to_end) return row.time;
  if (row.transfer_samples.empty()) return std::nullopt;
  return summarize(row.transfer_samples.end_to_end);
}

std::optional<TimingStats> Tuner::objective_time(const TuneRow &row) const {
  std::optional<TimingStats> t = raw_objective_time(row.row);
  if (!t) return t;
  const std::optional<double> scale = device_scale(row);
  if (!scale) return std::nullopt;
  for (double *v : {&t->median, &t->mean, &t->min, &t->max}) *v *= *scale;
  return t;
}

// The fastest ok time of the accurate kernel in a stage's rows of one device, over the shapes.
std::optional<double> Tuner::best_baseline(const std::string &stage, const std::string &app,
                                           int device) const {
  std::optional<double> best;
  for (const auto &wg : cfg_.shapes) {
    const TuneRow *r = find(stage, app, base_id_, shape_label(wg), cfg_.train[0].name, device);
    if (!r || !r->row.ok()) continue;
    if (const auto t = raw_objective_time(r->row); t && (!best || t->median < *best))
      best = t->median;
  }
  return best;
}

std::optional<double> Tuner::device_scale(const TuneRow &row) const {
  const bool screen = row.stage == "screen";
  if ((row.stage != "sweep" && !screen) || row.device == home_device(row.row.app)) return 1.0;
  // The accurate kernel is always swept on the app's home device; another device times it again in
  // each timed stage it takes part in (the atoms' or the combinations'). The scale is the median
  // over the shapes of the first device's time over this one's: near the launch floor one
  // shape's time can be 10 % off, and a scale from the best shapes alone would carry that error
  // into every row of the device.
  const auto app = states_.find(row.row.app);
  if (app == states_.end()) return std::nullopt;
  const auto state = app->second.find(variant_id(row.row));
  const bool combination = state != app->second.end() && state->second.origin == "combination";
  const std::string own_stage =
      screen ? "screen-baseline"
             : std::string("sweep-baseline:") + (combination ? "combination" : "atom");
  std::vector<double> ratios;
  for (const auto &wg : cfg_.shapes) {
    const std::string shape = shape_label(wg), input = cfg_.train[0].name;
    const TuneRow *first = find("sweep", row.row.app, base_id_, shape, input);
    const TuneRow *own = find(own_stage, row.row.app, base_id_, shape, input, row.device);
    if (!first || !own || !first->row.ok() || !own->row.ok()) continue;
    const auto t_first = raw_objective_time(first->row), t_own = raw_objective_time(own->row);
    if (t_first && t_own && t_first->median > 0 && t_own->median > 0)
      ratios.push_back(t_first->median / t_own->median);
  }
  if (ratios.empty()) return std::nullopt;
  return percentile(ratios, 50);
}

std::vector<ImageSource> Tuner::inputs_of(StageInputs which) const {
  switch (which) {
    case StageInputs::kTrain:
      return cfg_.train;
    case StageInputs::kFirstTrain:
      return {cfg_.train[0]};
    case StageInputs::kTest:
      return cfg_.test;
  }
  return {};
}

void Tuner::set_baselines() {
  base_ = default_variant();
  base_id_ = variant_id(base_);
  paraprox_ = base_;
  paraprox_.load = &find_load("global");
  paraprox_id_ = variant_id(paraprox_);
}

TuneSpace Tuner::donor_space() const {
  TuneSpace space = make_space(cfg_.axes);
  std::vector<Variant> &loads = space.values[AxisGroup::kLoad];
  const bool listed = std::any_of(loads.begin(), loads.end(), [&](const Variant &d) {
    return variant_id(with_group(base_, AxisGroup::kLoad, d)) == paraprox_id_;
  });
  if (!listed) loads.push_back(paraprox_);
  return space;
}

bool Tuner::apps_have_homes() const {
  return cfg_.multi_device() && cfg_.apps.size() >= 1 + cfg_.worker_devices.size();
}

int Tuner::home_device(const std::string &app) const {
  if (!apps_have_homes()) return 0;
  for (std::size_t i = 0; i < cfg_.apps.size(); ++i)
    if (cfg_.apps[i]->name == app) return static_cast<int>(i % (1 + cfg_.worker_devices.size()));
  return 0;
}

bool Tuner::run(const Checkpoint &checkpoint) {
  set_baselines();
  states_.clear();
  order_.clear();
  auto interrupted = [&]() {
    summary_ = nlohmann::ordered_json::object();
    return false;
  };
  // 1-2. Atoms probed on every training input, the admissible ones timed at every shape;
  // 3. the same for combinations (with --screen-combinations, only the fastest of more of them
  // timed at their probe shape); 4. confirm the best shapes.
  add_atoms(make_space(cfg_.axes));
  for (const char *origin : {"atom", "combination"}) {
    if (std::string(origin) == "combination") {
      add_combinations();
      if (cfg_.screen_combinations) {
        Plan screen = plan_of(origin, false);
        for (auto *app : cfg_.apps)
          if (!screens(*app)) screen.apps.erase(app->name);
        if (!stage("screen", StageInputs::kFirstTrain, screen, true, false, "screen-baseline",
                   checkpoint))
          return interrupted();
        judge_faults("screen");
        judge_screen();
      }
    }
    if (!stage("probe", StageInputs::kTrain, plan_of(origin, false), false, false, "", checkpoint))
      return interrupted();
    judge_faults("probe");
    judge_probes(origin);
    const std::string baseline = std::string("sweep-baseline:") + origin;
    if (!sweep(origin, baseline, checkpoint)) return interrupted();
    judge_faults("sweep");
    judge_faults(baseline);
    judge_sweeps(origin);
  }
  if (!stage("confirm", StageInputs::kTrain, confirm_plan(), false, false, "", checkpoint))
    return interrupted();
  judge_faults("confirm");
  // Points and fronts; 5. each budget's finalists timed again beside the baselines in
  // interleaved rounds, and the choices; 6. the choices on the held-out inputs. A choice that
  // faults the device in either leaves the search as a pruned one does, and each budget chooses
  // again.
  nlohmann::ordered_json apps_json;
  std::map<std::string, std::vector<Choice>> choices;
  for (bool again = true; again;) {
    std::map<std::string, std::vector<Point>> points;
    for (auto *app : cfg_.apps) points[app->name] = points_of(*app);
    if (!stage("rank", StageInputs::kFirstTrain, rank_plan(points), true, false, "", checkpoint))
      return interrupted();
    judge_faults("rank");
    apps_json = nlohmann::ordered_json::object();
    for (auto *app : cfg_.apps) {
      points[app->name] = points_of(*app);
      choices[app->name] = choose(*app, points[app->name]);
      apps_json[app->name] = app_json(*app, points[app->name]);
    }
    if (!stage("test", StageInputs::kTest, test_plan(choices), false, true, "", checkpoint))
      return interrupted();
    judge_faults("test");
    again = false;
    for (auto *app : cfg_.apps)
      for (const auto &c : choices[app->name])
        again = again || (c.point && !states_[app->name].at(c.point->id).problem.empty());
  }
  for (auto *app : cfg_.apps) {
    apps_json[app->name]["choices"] =
        choices_json(*app, choices[app->name], apps_json[app->name]["points"]);
    apps_json[app->name]["accurate_test_outputs"] = accurate_outputs_json(*app);
  }
  // 7. With --select canary: each budget's ladder on the held-out inputs, and the canaries.
  if (cfg_.select_canary && !select_by_canary(choices, apps_json, checkpoint)) return interrupted();
  summary_ = apps_json;
  return true;
}

}  // namespace kperf
