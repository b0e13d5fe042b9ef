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
#include <tuple>

#include "fault_journal.hpp"
#include "kernel_axes.hpp"
#include "stats.hpp"
#include "tune_internal.hpp"
#include "tune_ledger.hpp"

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
       std::tie(b.scheme, b.skip, b.recon, b.host_perforate) =
           std::tie(d.scheme, d.skip, d.recon, d.host_perforate);
     },
     [](AxesSpec &s, const AxesSpec &a) {
       std::tie(s.schemes, s.recons, s.perforates) = std::tie(a.schemes, a.recons, a.perforates);
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
       std::tie(b.output, b.output_recon, b.output_fill) =
           std::tie(d.output, d.output_recon, d.output_fill);
     },
     [](AxesSpec &s, const AxesSpec &a) {
       std::tie(s.outputs, s.output_recons, s.output_fills) =
           std::tie(a.outputs, a.output_recons, a.output_fills);
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
      ledger_(std::make_unique<TuneLedger>(cfg_, std::move(resumed))),
      truths_(std::make_shared<TruthCache>()),
      residency_(std::make_shared<DeviceResidency>(env.info().global_mem_size / 4)) {
  // A quarter of the machine's memory at most: at 2048^2 a truth is 32 MiB.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  truths_->max_bytes = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) / 4 * page : 0;
}

Tuner::~Tuner() = default;

const std::vector<TuneRow> &Tuner::rows() const { return ledger_->rows(); }

std::vector<ImageSource> TuneStages::inputs_of(StageInputs which) const {
  switch (which) {
    case StageInputs::kTrain:
      return t_.cfg_.train;
    case StageInputs::kFirstTrain:
      return {t_.cfg_.train[0]};
    case StageInputs::kTest:
      return t_.cfg_.test;
  }
  return {};
}

void Tuner::set_baselines() {
  base_ = default_variant();
  base_id_ = variant_id(base_);
  ledger_->set_base(base_id_);
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
        if (!TuneStages(*this).stage("screen", StageInputs::kFirstTrain, screen, true, false,
                                     "screen-baseline", checkpoint))
          return interrupted();
        judge_faults("screen");
        judge_screen();
      }
    }
    if (!TuneStages(*this).stage("probe", StageInputs::kTrain, plan_of(origin, false), false, false,
                                 "", checkpoint))
      return interrupted();
    judge_faults("probe");
    judge_probes(origin);
    const std::string baseline = std::string("sweep-baseline:") + origin;
    if (!sweep(origin, baseline, checkpoint)) return interrupted();
    judge_faults("sweep");
    judge_faults(baseline);
    judge_sweeps(origin);
  }
  if (!TuneStages(*this).stage("confirm", StageInputs::kTrain, confirm_plan(), false, false, "",
                               checkpoint))
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
    for (auto *app : cfg_.apps) points[app->name] = TuneReport(*this).points_of(*app);
    if (!TuneStages(*this).stage("rank", StageInputs::kFirstTrain, rank_plan(points), true, false,
                                 "", checkpoint))
      return interrupted();
    judge_faults("rank");
    apps_json = nlohmann::ordered_json::object();
    for (auto *app : cfg_.apps) {
      points[app->name] = TuneReport(*this).points_of(*app);
      choices[app->name] = TuneReport(*this).choose(*app, points[app->name]);
      apps_json[app->name] = TuneReport(*this).app_json(*app, points[app->name]);
    }
    if (!TuneStages(*this).stage("test", StageInputs::kTest, test_plan(choices), false, true, "",
                                 checkpoint))
      return interrupted();
    judge_faults("test");
    again = false;
    for (auto *app : cfg_.apps)
      for (const auto &c : choices[app->name])
        again = again || (c.point && !states_[app->name].at(c.point->id).problem.empty());
  }
  for (auto *app : cfg_.apps) {
    apps_json[app->name]["choices"] =
        TuneReport(*this).choices_json(*app, choices[app->name], apps_json[app->name]["points"]);
    apps_json[app->name]["accurate_test_outputs"] = TuneReport(*this).accurate_outputs_json(*app);
  }
  // 7. With --select canary: each budget's ladder on the held-out inputs, and the canaries.
  if (cfg_.select_canary && !select_by_canary(choices, apps_json, checkpoint)) return interrupted();
  summary_ = apps_json;
  return true;
}

}  // namespace kperf
