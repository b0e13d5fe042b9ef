// kperf tune (SPEC 12): atoms probed, pruned and swept, their fronts combined,
// the survivors confirmed on every training input, one choice per budget
// checked on held-out inputs.
#include "tune.hpp"

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

namespace kperf {

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string shape_label(const WorkGroup &wg) { return wg_label(wg.x, wg.y, wg.vec, wg.py); }

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile of an empty list");
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

std::vector<std::size_t> pareto_indices(const std::vector<FrontPoint> &points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // By time, then error, then first seen: a sweep keeps a point only when it
  // lowers the error.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].time != points[b].time) return points[a].time < points[b].time;
    return points[a].error < points[b].error;
  });
  std::vector<std::size_t> front;
  double best_error = std::numeric_limits<double>::infinity();
  for (std::size_t i : order)
    if (points[i].error < best_error) {
      front.push_back(i);
      best_error = points[i].error;
    }
  return front;
}

std::string variant_id(const Variant &v) { return v.id(); }

std::string variant_id(const ResultRow &row) { return row.variant; }

bool is_exact(const Variant &v) {
  return v.is_accurate() && v.output.none() && v.precision_info().exact() && kernel_axes_exact(v) &&
         v.iterations_skip == 0;
}

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

std::vector<Combination> propose_combinations(const std::vector<AtomStanding> &atoms,
                                              double base_time, double max_error,
                                              std::size_t limit) {
  if (base_time <= 0) return {};
  const Variant base = default_variant();
  const std::string base_id = variant_id(base);
  // Per group, the front of its atoms; the default value (no change, ratio 1,
  // error 0) always takes part so that a combination may leave a group alone.
  struct Member {
    Variant donor;
    double ratio, error;
    bool is_default;
  };
  std::map<AxisGroup, std::vector<Member>> fronts;
  for (AxisGroup g : all_groups()) {
    std::vector<const AtomStanding *> members;
    std::vector<FrontPoint> points;
    for (const auto &a : atoms)
      if (a.group == g && variant_id(a.variant) != base_id) {
        members.push_back(&a);
        points.push_back({a.time, a.error});
      }
    std::vector<Member> &front = fronts[g];
    front.push_back({base, 1.0, 0.0, true});
    for (std::size_t i : pareto_indices(points))
      front.push_back(
          {members[i]->variant, members[i]->time / base_time, members[i]->error, false});
  }
  std::vector<Combination> out;
  std::set<std::string> seen;
  // Walk the cross product of the fronts with an odometer over the groups.
  std::vector<AxisGroup> groups;
  for (const auto &[g, f] : fronts) groups.push_back(g);
  std::vector<std::size_t> digit(groups.size(), 0);
  while (true) {
    Variant v = base;
    double ratio = 1, error = 0;
    int changed = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const Member &m = fronts[groups[i]][digit[i]];
      if (m.is_default) continue;
      v = with_group(v, groups[i], m.donor);
      ratio *= m.ratio;
      error += m.error;
      ++changed;
    }
    if (changed >= 2 && error <= max_error && seen.insert(variant_id(v)).second)
      out.push_back({v, base_time * ratio, error});
    std::size_t i = 0;
    while (i < groups.size() && ++digit[i] == fronts[groups[i]].size()) digit[i++] = 0;
    if (i == groups.size()) break;
  }
  std::stable_sort(out.begin(), out.end(), [](const Combination &a, const Combination &b) {
    return a.predicted_time < b.predicted_time;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// Per app, per variant id: the variant and the launch shapes a stage runs it
// at.
struct Tuner::Plan {
  std::map<std::string, std::map<std::string, std::pair<Variant, std::vector<WorkGroup>>>> apps;
  bool empty() const {
    for (const auto &[app, variants] : apps)
      if (!variants.empty()) return false;
    return true;
  }
};

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
    : env_(env), cfg_(std::move(config)), rows_(std::move(resumed)) {
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

// What a stage request calls its inputs.
constexpr std::pair<StageInputs, const char *> kStageInputNames[] = {
    {StageInputs::kTrain, "train"},
    {StageInputs::kFirstTrain, "first-train"},
    {StageInputs::kTest, "test"}};

const char *inputs_name(StageInputs which) {
  for (const auto &[inputs, name] : kStageInputNames)
    if (inputs == which) return name;
  return "";
}

StageInputs inputs_from_name(const std::string &text) {
  for (const auto &[inputs, name] : kStageInputNames)
    if (text == name) return inputs;
  throw std::invalid_argument("unknown stage inputs '" + text + "'");
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

bool Tuner::stage(const std::string &name, StageInputs inputs, const Plan &plan, bool timed,
                  bool save, const std::string &baseline_stage, const Checkpoint &checkpoint) {
  if (plan.empty()) return true;
  std::set<std::string> skip_keys;
  for (const auto &r : rows_)
    if (r.stage == name) skip_keys.insert(r.row.key);
  if (!cfg_.multi_device()) return measure(name, inputs, plan, timed, save, skip_keys, checkpoint);

  // With at least as many apps as devices, each app lives on its home device in every stage:
  // no process computes another's references, and every speedup is within one device, as in a
  // one-device tune. Otherwise units (an app's variant at its shapes) go to the least loaded
  // device, largest first, and the accurate kernel stays on the first, whose times are the scale
  // of the others.
  const std::size_t devices = 1 + cfg_.worker_devices.size();
  const TuneSpace space = donor_space();
  std::vector<Plan> shares(devices);
  std::vector<std::size_t> load(devices, 0);
  struct Unit {
    std::string app, id;
    const std::pair<Variant, std::vector<WorkGroup>> *entry;
  };
  std::vector<Unit> units;
  for (const auto &[app, variants] : plan.apps)
    for (const auto &[id, entry] : variants) {
      const int home = home_device(app);
      bool sendable = id != base_id_ || home != 0;
      if (sendable) try {
          donor_indices(space, entry.first);
        } catch (const std::invalid_argument &) {
          sendable = false;  // measured here
        }
      if (!sendable && home != 0)
        throw std::logic_error("kperf tune cannot name " + id + " to the worker of " + app);
      if (apps_have_homes() || !sendable) {
        shares[home].apps[app][id] = entry;
        load[home] += entry.second.size();
      } else {
        units.push_back({app, id, &entry});
      }
    }
  std::stable_sort(units.begin(), units.end(), [](const Unit &a, const Unit &b) {
    return a.entry->second.size() > b.entry->second.size();
  });
  for (const Unit &u : units) {
    const std::size_t d =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shares[d].apps[u.app][u.id] = *u.entry;
    load[d] += u.entry->second.size();
  }

  const double start = now_s(), measured_before = stage_s_[name];
  std::vector<std::unique_ptr<StageWorker>> workers;
  for (std::size_t d = 1; d < devices; ++d) {
    if (shares[d].empty()) continue;
    std::set<std::string> apps_here;
    nlohmann::ordered_json units_json = nlohmann::ordered_json::array();
    auto add_unit = [&](const std::string &app, const Variant &v,
                        const std::vector<WorkGroup> &shapes) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto &wg : shapes) list.push_back({wg.x, wg.y, wg.vec, wg.py});
      units_json.push_back({{"app", app},
                            {"variant", variant_id(v)},
                            {"donors", donor_indices(space, v)},
                            {"shapes", list}});
    };
    for (const auto &[app, variants] : shares[d].apps)
      for (const auto &[id, entry] : variants) {
        add_unit(app, entry.first, entry.second);
        if (home_device(app) != static_cast<int>(d)) apps_here.insert(app);
      }
    // What it measured before an interruption is not measured again. For an app whose home is
    // another device, it measures its own accurate kernel, for its scale, whatever the home
    // device's sweep holds.
    std::set<std::string> skip;
    for (const auto &r : rows_) {
      const bool scale_of_another =
          timed && r.row.variant == base_id_ && apps_here.count(r.row.app);
      if ((r.stage == name && !scale_of_another) ||
          (timed && r.stage == baseline_stage && r.device == static_cast<int>(d)))
        skip.insert(r.row.key);
    }
    if (timed)
      for (const auto &app : apps_here) add_unit(app, base_, cfg_.shapes);
    nlohmann::ordered_json request = {{"args", cfg_.command_args},
                                      {"stage", name},
                                      {"inputs", inputs_name(inputs)},
                                      {"timed", timed},
                                      {"save", save},
                                      {"outputs_dir", cfg_.outputs_dir},
                                      {"skip_keys", skip},
                                      {"units", units_json}};
    workers.push_back(std::make_unique<StageWorker>(std::move(request), static_cast<int>(d),
                                                    cfg_.worker_devices[d - 1]));
  }
  bool complete = measure(name, inputs, shares[0], timed, save, skip_keys, checkpoint);
  std::string problem;
  for (auto &w : workers) {
    StageWorker::Result result = w->finish(interrupt_requested());
    for (auto &row : result.rows) {
      const bool baseline = timed && row.variant == base_id_ && home_device(row.app) != w->slot();
      rows_.push_back({baseline ? baseline_stage : name, std::move(row), w->slot()});
      index(rows_.size() - 1);
      journal_row(to_json(rows_.back()));  // a restarted tune keeps the other devices' rows
    }
    copy_gbps_ = std::max(copy_gbps_, result.copy_gbps);
    for (auto it = result.phases.begin(); it != result.phases.end(); ++it)
      if (it.value().is_number()) runner_phase_s_[it.key()] += it.value().get<double>();
    if (result.interrupted) complete = false;
    if (!result.problem.empty() && problem.empty()) problem = result.problem;
  }
  stage_s_[name] = measured_before + (now_s() - start);  // the stage's wall time, workers included
  checkpoint(rows_);
  if (!problem.empty()) throw std::runtime_error(problem);
  return complete;
}

bool Tuner::measure(const std::string &name, StageInputs inputs, const Plan &plan, bool timed,
                    bool save, const std::set<std::string> &skip_keys,
                    const Checkpoint &checkpoint) {
  if (plan.empty()) return true;
  const double start = now_s();
  RunConfig rc;
  std::set<std::string> variant_seen;
  std::set<WorkGroup> shape_set;
  for (auto *app : cfg_.apps) {
    const auto it = plan.apps.find(app->name);
    if (it == plan.apps.end() || it->second.empty()) continue;
    rc.apps.push_back(app);
    for (const auto &[id, entry] : it->second) {
      if (variant_seen.insert(id).second) rc.variants.push_back(entry.first);
      shape_set.insert(entry.second.begin(), entry.second.end());
    }
  }
  for (const auto &wg : cfg_.shapes)
    if (shape_set.count(wg)) rc.wgs.push_back(wg);
  rc.image_inputs = inputs_of(inputs);
  if (cfg_.size) rc.sizes = {*cfg_.size};
  rc.transfers = timed && cfg_.end_to_end;
  rc.energy_requested = timed && cfg_.energy_spec != "none";
  rc.energy = rc.energy_requested ? cfg_.energy : nullptr;
  rc.energy_options = cfg_.energy_options;
  rc.energy_absent_reason = cfg_.energy_absent_reason;
  rc.warmup = timed ? cfg_.warmup : 0;
  rc.reps = timed ? cfg_.reps : 1;
  rc.kernel_root = cfg_.kernel_root;
  rc.extra_build_options = cfg_.extra_build_options;
  rc.compile_worker_exe = cfg_.compile_worker_exe;
  if (save) rc.save_outputs_dir = cfg_.outputs_dir;
  rc.ssim = save;  // the search needs the primary metric alone; SSIM costs the most
  rc.progress = cfg_.progress;
  rc.progress_label = "tune " + name + " ";
  rc.skip_keys = skip_keys;
  rc.journal_fields = {{"stage", name}};
  rc.only = [&plan](const AppDescriptor &app, const Variant &v, const WorkGroup &wg) {
    const auto a = plan.apps.find(app.name);
    if (a == plan.apps.end()) return false;
    const auto e = a->second.find(variant_id(v));
    if (e == a->second.end()) return false;
    const auto &shapes = e->second.second;
    return std::find(shapes.begin(), shapes.end(), wg) != shapes.end();
  };
  Runner runner(env_, rc);
  double last_checkpoint = now_s();
  runner.run([&](ResultRow row) {
    rows_.push_back({name, std::move(row)});
    index(rows_.size() - 1);
    if (now_s() - last_checkpoint > 10) {
      checkpoint(rows_);
      last_checkpoint = now_s();
    }
  });
  stopped_ = stopped_ || runner.stopped();
  if (timed) copy_gbps_ = std::max(copy_gbps_, runner.largest_copy_gbps());
  const nlohmann::ordered_json phases = runner.phases_json();
  for (auto it = phases.begin(); it != phases.end(); ++it)
    runner_phase_s_[it.key()] += it.value().get<double>();
  stage_s_[name] += now_s() - start;
  checkpoint(rows_);
  return !runner.interrupted();
}

bool Tuner::run_share(const nlohmann::json &request, const Checkpoint &checkpoint) {
  set_baselines();
  const std::string stage_name = request.at("stage").get<std::string>();
  auto skip = request.at("skip_keys").get<std::set<std::string>>();
  for (const TuneRow &r : rows_)  // what an earlier process of this share measured
    if (r.stage == stage_name) skip.insert(r.row.key);
  const TuneSpace space = donor_space();
  Plan plan;
  for (const auto &unit : request.at("units")) {
    const Variant v = from_donor_indices(space, unit.at("donors").get<std::vector<int>>());
    const std::string id = unit.at("variant").get<std::string>();
    if (variant_id(v) != id)
      throw std::runtime_error("the tune's worker rebuilt " + variant_id(v) + " for " + id +
                               " (was it given the same command line?)");
    std::vector<WorkGroup> shapes;
    for (const auto &s : unit.at("shapes"))
      shapes.push_back(
          {s.at(0).get<int>(), s.at(1).get<int>(), s.at(2).get<int>(), s.at(3).get<int>()});
    plan.apps[unit.at("app").get<std::string>()][id] = {v, shapes};
  }
  return measure(stage_name, inputs_from_name(request.at("inputs").get<std::string>()), plan,
                 request.at("timed").get<bool>(), request.at("save").get<bool>(), skip, checkpoint);
}

nlohmann::ordered_json Tuner::phases_json() const {
  nlohmann::ordered_json stages = nlohmann::ordered_json::object(), phases = stages;
  for (const auto &[k, v] : stage_s_) stages[k] = v;
  for (const auto &[k, v] : runner_phase_s_) phases[k] = v;
  return {{"stages_s", stages}, {"phases_s", phases}};
}

double Tuner::best_time_of(const std::string &app, const std::string &id) const {
  const auto a = states_.find(app);
  if (a == states_.end()) return 0;
  const auto s = a->second.find(id);
  return s != a->second.end() && s->second.best ? s->second.best_time : 0;
}

// The shape with the largest block of outputs that the device and the variant accept: tile
// edges (where perforation and halo skipping lose the most) shrink as the block grows, so a
// variant is judged where it errs least.
std::optional<WorkGroup> Tuner::probe_shape(const AppDescriptor &app, const Variant &v,
                                            std::string &why) const {
  std::optional<WorkGroup> best;
  long best_area = -1;
  for (const auto &wg : cfg_.shapes) {
    if (const auto verdict = check_launch(app, v, wg, env_.info())) {
      if (why.empty()) why = verdict->status + ": " + verdict->reason;
      continue;
    }
    const WorkGroup b = block_of(v, wg);
    const long area = static_cast<long>(b.x) * b.y;
    if (area > best_area) best = wg, best_area = area;
  }
  return best;
}

Tuner::State *Tuner::add(const AppDescriptor &app, const Variant &v, const std::string &origin) {
  const std::string id = variant_id(v);
  auto &m = states_[app.name];
  if (m.count(id)) return nullptr;
  State s;
  s.v = v;
  s.origin = origin;
  std::string why;
  s.probe = probe_shape(app, v, why);
  if (!s.probe) {
    s.problem = "no launch shape runs it (" + why + ")";
    s.pruned_at = "plan";
  }
  order_[app.name].push_back(id);
  return &m.emplace(id, std::move(s)).first->second;
}

// The training errors of a variant at one shape (from one stage's rows), or why there are none.
std::vector<double> Tuner::train_errors(const std::string &stage, const AppDescriptor &app,
                                        const Variant &v, const WorkGroup &wg,
                                        std::string &problem) const {
  std::vector<double> errors;
  for (const auto &src : cfg_.train) {
    const TuneRow *found = find(stage, app.name, variant_id(v), shape_label(wg), src.name);
    const ResultRow *r = found ? &found->row : nullptr;
    if (!r) {
      problem = "not measured on " + src.name;
      return errors;
    }
    if (!r->ok() || !r->error) {
      problem = r->status + " on " + src.name + ": " + r->reason;
      return errors;
    }
    // A relaxed barrier races: its error is the worst of several launches.
    double e = r->error->value(app.primary_metric);
    for (double rep : r->error_reps) e = std::max(e, rep);
    if (!std::isfinite(e)) {
      problem = "non-finite error on " + src.name;
      return errors;
    }
    errors.push_back(e);
  }
  return errors;
}

Tuner::Plan Tuner::plan_of(const std::string &origin_prefix, bool every_shape) {
  Plan plan;
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name])
      if (s.origin.rfind(origin_prefix, 0) == 0 && s.problem.empty())
        plan.apps[app->name][id] = {s.v, every_shape ? cfg_.shapes : std::vector{*s.probe}};
  return plan;
}

// After a probe: the percentile training error, and pruning above the largest budget.
void Tuner::judge_probes(const std::string &origin_prefix) {
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin.rfind(origin_prefix, 0) != 0 || !s.problem.empty()) continue;
      std::string problem;
      const auto errors = train_errors("probe", *app, s.v, *s.probe, problem);
      if (!problem.empty()) {
        s.problem = problem;
        s.pruned_at = "probe";
        continue;
      }
      s.probe_error = percentile(errors, cfg_.percentile);
      if (s.probe_error > cfg_.budgets.back() && !is_exact(s.v)) {
        s.problem = "training error above the largest budget at the probe shape";
        s.pruned_at = "probe";
      }
    }
}

// After a sweep: each survivor's fastest shape on the first training input.
void Tuner::judge_sweeps(const std::string &origin_prefix) {
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin.rfind(origin_prefix, 0) != 0 || !s.problem.empty()) continue;
      s.swept = true;
      std::string reasons;
      for (const auto &wg : cfg_.shapes) {
        const TuneRow *found = find("sweep", app->name, id, shape_label(wg), cfg_.train[0].name);
        if (!found) continue;
        const ResultRow *r = &found->row;
        const std::optional<TimingStats> t = objective_time(*found);
        if (!r->ok() || !t) {
          if (reasons.empty())
            reasons = r->ok() ? "no accurate baseline on device " + std::to_string(found->device)
                              : r->status + ": " + r->reason;
          continue;
        }
        if (!s.best || t->median < s.best_time) s.best = wg, s.best_time = t->median;
      }
      if (!s.best) {
        s.problem = "no launch shape ran (" + reasons + ")";
        s.pruned_at = "sweep";
      }
    }
}

// After the screen: each app's combinations ranked by their time at the probe shape on the first
// training input; those past --max-combinations leave the search.
void Tuner::judge_screen() {
  for (auto *app : cfg_.apps) {
    if (!screens(*app)) continue;
    std::vector<std::pair<double, State *>> timed;
    std::size_t screened = 0;
    for (auto &[id, s] : states_[app->name]) {
      if (s.origin != "combination" || !s.problem.empty()) continue;
      ++screened;
      const TuneRow *found = nullptr;
      for (int d = 0; d <= static_cast<int>(cfg_.worker_devices.size()) && !found; ++d)
        found = find("screen", app->name, id, shape_label(*s.probe), cfg_.train[0].name, d);
      const std::optional<TimingStats> t =
          found && found->row.ok() ? objective_time(*found) : std::nullopt;
      if (!t) {
        s.problem = !found ? "not timed"
                    : found->row.ok()
                        ? "no accurate baseline on device " + std::to_string(found->device)
                        : found->row.status + ": " + found->row.reason;
        s.pruned_at = "screen";
        continue;
      }
      timed.push_back({t->median, &s});
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    for (std::size_t i = cfg_.max_combinations; i < timed.size(); ++i) {
      char us[32];
      std::snprintf(us, sizeof us, "%.1f", timed[i].first / 1e3);
      timed[i].second->problem = "not among the " + std::to_string(cfg_.max_combinations) +
                                 " fastest of the " + std::to_string(screened) +
                                 " combinations timed at the probe shape (" + us + " us)";
      timed[i].second->pruned_at = "screen";
    }
  }
}

void Tuner::judge_faults(const std::string &stage) {
  for (const TuneRow &t : rows_) {
    if (t.stage != stage || !t.row.device_faulted()) continue;
    auto a = states_.find(t.row.app);
    if (a == states_.end()) continue;
    auto s = a->second.find(variant_id(t.row));
    if (s == a->second.end() || !s->second.problem.empty()) continue;
    s->second.problem = "device_fault at " + wg_label(t.row.wg_x, t.row.wg_y, t.row.vec, t.row.py) +
                        " on " + t.row.input_name + ": " + t.row.reason;
    s->second.pruned_at = stage;
  }
}

// Whether the screen times an app's combinations: only where it has more than it may try.
bool Tuner::screens(const AppDescriptor &app) {
  std::size_t combinations = 0;
  for (const auto &[id, s] : states_[app.name])
    combinations += s.origin == "combination" && s.problem.empty();
  return combinations > cfg_.max_combinations;
}

// 1. Atoms: each axis value alone, and the two baselines whatever the lists say (speedups are
// against them).
void Tuner::add_atoms(const TuneSpace &space) {
  for (auto *app : cfg_.apps)
    for (const auto &[group, donors] : space.values) {
      // A kernel axis only some apps have (bilateral's loop) is not searched for the others.
      if (group.is_kernel() && !kernel_axes()[group.kernel_axis()].applies_to(*app)) continue;
      for (const auto &donor : donors)
        add(*app, with_group(base_, group, donor), std::string("atom:") + group_name(group));
    }
  for (auto *app : cfg_.apps) {
    add(*app, base_, "atom:input");
    if (!paraprox_.load_path().reads_image) add(*app, paraprox_, "atom:load");
  }
}

// 3. Combinations of the groups' fronts, predicted from their atoms.
void Tuner::add_combinations() {
  for (auto *app : cfg_.apps) {
    auto &m = states_[app->name];
    const auto b = m.find(base_id_);
    if (b == m.end() || !b->second.best) continue;
    std::vector<AtomStanding> standings;
    for (auto &[id, s] : m)
      if (s.origin.rfind("atom:", 0) == 0 && s.problem.empty() && s.best) {
        AxisGroup g = AxisGroup::kInput;
        for (AxisGroup c : all_groups())
          if (s.origin == "atom:" + group_name(c)) g = c;
        standings.push_back({g, s.v, s.best_time, s.probe_error});
      }
    const std::size_t limit =
        cfg_.screen_combinations ? cfg_.screen_combinations : cfg_.max_combinations;
    for (const auto &c :
         propose_combinations(standings, b->second.best_time, cfg_.budgets.back(), limit))
      if (State *s = add(*app, c.variant, "combination")) s->proposal = c;
  }
}

// 4. Each survivor's best shape on every training input, where the probe did not run it.
Tuner::Plan Tuner::confirm_plan() {
  Plan plan;
  for (auto *app : cfg_.apps)
    for (auto &[id, s] : states_[app->name])
      if (s.problem.empty() && s.best && !(*s.best == *s.probe))
        plan.apps[app->name][id] = {s.v, {*s.best}};
  return plan;
}

// Every survivor at its probe shape and at its best shape.
std::vector<Tuner::Point> Tuner::points_of(const AppDescriptor &app) const {
  std::vector<Point> points;
  const auto &m = states_.at(app.name);
  for (const auto &id : order_.at(app.name)) {
    const State &s = m.at(id);
    if (!s.problem.empty() || !s.best) continue;
    std::vector<std::pair<WorkGroup, std::string>> where = {{*s.probe, "probe"}};
    if (!(*s.best == *s.probe)) where.emplace_back(*s.best, "confirm");
    for (const auto &[wg, stage_name] : where) {
      const TuneRow *found = find("sweep", app.name, id, shape_label(wg), cfg_.train[0].name);
      const ResultRow *timed = found ? &found->row : nullptr;
      const std::optional<TimingStats> t = found ? objective_time(*found) : std::nullopt;
      if (!timed || !timed->ok() || !t) continue;
      std::string problem;
      Point p{id, wg, t->median, t->cv, {}, 0, timed->key, found->device};
      p.errors = train_errors(stage_name, app, s.v, wg, problem);
      if (!problem.empty()) continue;
      p.error = percentile(p.errors, cfg_.percentile);
      points.push_back(p);
    }
  }
  return points;
}

// Per budget, the fastest point within it.
std::vector<Tuner::Choice> Tuner::choose(const std::vector<Point> &points) const {
  std::vector<Choice> out;
  for (double budget : cfg_.budgets) {
    Choice c{budget, std::nullopt};
    for (const auto &p : points)
      if (p.error <= budget && (!c.point || p.time < c.point->time)) c.point = p;
    out.push_back(c);
  }
  return out;
}

// An app's points, Pareto front and pruned variants.
nlohmann::ordered_json Tuner::app_json(const AppDescriptor &app,
                                       const std::vector<Point> &points) const {
  const auto &m = states_.at(app.name);
  const double base_time = best_time_of(app.name, base_id_);
  const double global_time = best_time_of(app.name, paraprox_id_);
  nlohmann::ordered_json j;
  j["primary_metric"] = metric_name(app.primary_metric);
  j["accurate_time_ns"] = base_time;
  j["paraprox_baseline_time_ns"] = number_or_null(global_time > 0 ? global_time : NAN);
  if (apps_have_homes()) {
    j["device_slot"] = home_device(app.name);  // where every row of the app was measured
  } else if (cfg_.multi_device()) {
    // Each device's accurate kernel at its best shape, per timed stage: how far apart the devices
    // were, and the scale each one's sweep rows were put on.
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (int d = 0; d <= static_cast<int>(cfg_.worker_devices.size()); ++d) {
      nlohmann::ordered_json dj = {{"slot", d}};
      for (const char *origin : {"atom", "combination"}) {
        const auto t = d == 0 ? best_baseline("sweep", app.name, 0)
                              : best_baseline(std::string("sweep-baseline:") + origin, app.name, d);
        dj[std::string(origin) + "_accurate_time_ns"] = number_or_null(t ? *t : NAN);
        if (d == 0) break;
      }
      devices.push_back(dj);
    }
    j["device_baselines"] = devices;
  }
  auto point_json = [&](const Point &p) {
    const State &s = m.at(p.id);
    nlohmann::ordered_json pj;
    pj["variant"] = p.id;
    pj["family"] = family_of(s.v);
    pj["origin"] = s.origin;
    pj["wg"] = shape_label(p.wg);
    pj["key"] = p.key;
    pj["time_ns"] = p.time;  // under --devices, on the first device's scale
    pj["cv"] = p.cv;
    if (cfg_.multi_device()) pj["device_slot"] = p.device;
    pj["speedup"] = number_or_null(base_time > 0 ? base_time / p.time : NAN);
    pj["speedup_vs_global"] = number_or_null(global_time > 0 ? global_time / p.time : NAN);
    pj["train_error"] = p.error;
    pj["train_mean"] = std::accumulate(p.errors.begin(), p.errors.end(), 0.0) /
                       static_cast<double>(p.errors.size());
    pj["train_max"] = *std::max_element(p.errors.begin(), p.errors.end());
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < p.errors.size(); ++i) per[cfg_.train[i].name] = p.errors[i];
    pj["train_errors"] = per;
    if (s.proposal)
      pj["predicted"] = {{"time_ns", s.proposal->predicted_time},
                         {"error", s.proposal->predicted_error}};
    return pj;
  };
  std::vector<FrontPoint> fp;
  for (const auto &p : points) fp.push_back({p.time, p.error});
  const std::vector<std::size_t> front = pareto_indices(fp);
  const std::set<std::size_t> on_front(front.begin(), front.end());
  j["points"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto pj = point_json(points[i]);
    pj["pareto"] = on_front.count(i) > 0;
    j["points"].push_back(pj);
  }
  j["front"] = nlohmann::ordered_json::array();
  for (std::size_t i : front) j["front"].push_back(point_json(points[i]));
  j["pruned"] = nlohmann::ordered_json::array();
  for (const auto &id : order_.at(app.name)) {
    const State &s = m.at(id);
    if (s.problem.empty()) continue;
    j["pruned"].push_back({{"variant", id},
                           {"family", family_of(s.v)},
                           {"origin", s.origin},
                           {"at", s.pruned_at},
                           {"probe_wg", s.probe ? shape_label(*s.probe) : std::string()},
                           {"train_error", number_or_null(s.probe_error)},
                           {"reason", s.problem}});
    if (s.proposal)
      j["pruned"].back()["predicted"] = {{"time_ns", s.proposal->predicted_time},
                                         {"error", s.proposal->predicted_error}};
  }
  return j;
}

// 5. The choices (and the accurate kernel, for the gallery) on the held-out inputs.
Tuner::Plan Tuner::test_plan(const std::map<std::string, std::vector<Choice>> &choices) {
  Plan plan;
  for (auto *app : cfg_.apps) {
    auto &m = states_[app->name];
    if (m.count(base_id_) && m.at(base_id_).best)
      plan.apps[app->name][base_id_] = {base_, {*m.at(base_id_).best}};
    for (const auto &c : choices.at(app->name))
      if (c.point) {
        auto &entry = plan.apps[app->name][c.point->id];
        entry.first = m.at(c.point->id).v;
        if (std::find(entry.second.begin(), entry.second.end(), c.point->wg) == entry.second.end())
          entry.second.push_back(c.point->wg);
      }
  }
  return plan;
}

// Per budget: the choice, its errors on the held-out inputs and the verdict.
nlohmann::ordered_json Tuner::choices_json(const AppDescriptor &app,
                                           const std::vector<Choice> &choices,
                                           const nlohmann::ordered_json &points) const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto &c : choices) {
    nlohmann::ordered_json cj;
    cj["budget"] = c.budget;
    if (!c.point) {
      cj["chosen"] = nullptr;
      cj["verdict"] = "no configuration is within the budget on the training inputs";
      list.push_back(cj);
      continue;
    }
    const State &s = states_.at(app.name).at(c.point->id);
    cj["chosen"] = {{"variant", c.point->id},         {"family", family_of(s.v)},
                    {"wg", shape_label(c.point->wg)}, {"key", c.point->key},
                    {"time_ns", c.point->time},       {"train_error", c.point->error}};
    for (const auto &pj : points)
      if (pj["key"] == c.point->key) {
        cj["chosen"]["speedup"] = pj["speedup"];
        cj["chosen"]["speedup_vs_global"] = pj["speedup_vs_global"];
      }
    cj["exact"] = is_exact(s.v);
    std::vector<double> errors;
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    std::string problem;
    for (const auto &src : cfg_.test) {
      const TuneRow *found =
          find("test", app.name, c.point->id, shape_label(c.point->wg), src.name);
      const ResultRow *r = found ? &found->row : nullptr;
      if (!r || !r->ok() || !r->error) {
        problem = (r ? r->status + ": " + r->reason : "not measured") + " on " + src.name;
        break;
      }
      double e = r->error->value(app.primary_metric);
      for (double rep : r->error_reps) e = std::max(e, rep);
      errors.push_back(e);
      per[src.name] = {{"error", e}, {"output_file", r->output_file}, {"key", r->key}};
    }
    if (!problem.empty()) {
      // Not a NO: nothing says whether it holds.
      cj["test"] = {{"problem", problem}};
      cj["holds"] = nullptr;
      cj["verdict"] = "unmeasured: " + problem;
    } else {
      const double p = percentile(errors, cfg_.percentile);
      const double mx = *std::max_element(errors.begin(), errors.end());
      cj["test"] = {{"errors", per},
                    {"mean", std::accumulate(errors.begin(), errors.end(), 0.0) /
                                 static_cast<double>(errors.size())},
                    {"percentile_error", p},  // at --percentile (tune_schema_version 2)
                    {"max", mx}};
      cj["holds"] = p <= c.budget;
      cj["max_within_budget"] = mx <= c.budget;
      char text[256];
      std::snprintf(
          text, sizeof text, "%s: test p%g error %.4g %% %s the %.4g %% budget (max %.4g %%)",
          is_exact(s.v) ? "no approximation within the budget beats the accurate "
                          "kernel; accurate chosen"
                        : "approximation chosen",
          cfg_.percentile, 100 * p, p <= c.budget ? "within" : "ABOVE", 100 * c.budget, 100 * mx);
      cj["verdict"] = text;
    }
    list.push_back(cj);
  }
  return list;
}

// The accurate kernel's saved held-out outputs, for the report's gallery.
nlohmann::ordered_json Tuner::accurate_outputs_json(const AppDescriptor &app) const {
  nlohmann::ordered_json acc = nlohmann::ordered_json::object();
  const auto &m = states_.at(app.name);
  const auto base = m.find(base_id_);
  if (base == m.end() || !base->second.best) return acc;
  const WorkGroup wg = *base->second.best;
  for (const auto &src : cfg_.test)
    if (const TuneRow *r = find("test", app.name, base_id_, shape_label(wg), src.name))
      acc[src.name] = {{"output_file", r->row.output_file}, {"key", r->row.key}};
  return acc;
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
    if (!stage("sweep", StageInputs::kFirstTrain, plan_of(origin, true), true, false, baseline,
               checkpoint))
      return interrupted();
    judge_faults("sweep");
    judge_faults(baseline);
    judge_sweeps(origin);
  }
  if (!stage("confirm", StageInputs::kTrain, confirm_plan(), false, false, "", checkpoint))
    return interrupted();
  judge_faults("confirm");
  // Points, fronts and choices; 5. the choices on the held-out inputs. A choice that faults the
  // device there leaves the search as a pruned one does, and each budget chooses again.
  nlohmann::ordered_json apps_json;
  std::map<std::string, std::vector<Choice>> choices;
  for (bool again = true; again;) {
    apps_json = nlohmann::ordered_json::object();
    for (auto *app : cfg_.apps) {
      const std::vector<Point> points = points_of(*app);
      choices[app->name] = choose(points);
      apps_json[app->name] = app_json(*app, points);
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
  summary_ = apps_json;
  return true;
}

}  // namespace kperf
