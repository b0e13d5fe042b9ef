// kperf tune --devices: a stage worker's share as the request names it, and what a worker killed
// past its time limit leaves: a row for every configuration of its share that it did not return,
// so that the tune judges them as it judges failures and goes on (failures are data).

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "tune_internal.hpp"

namespace kperf {

using namespace tune_detail;

Tuner::Plan Tuner::plan_of_request(const nlohmann::json &request) const {
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
  return plan;
}

void Tuner::add_unmeasured(const StageWorker &worker, StageWorker::Result &result) {
  const nlohmann::json request = worker.request();
  const Plan plan = plan_of_request(request);
  // The share's rows as a dry run of it names them (keys, inputs at their sizes, every axis),
  // nothing built or launched; the rows the worker did return, or had measured before, are
  // skipped.
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
  rc.image_inputs = inputs_of(inputs_from_name(request.at("inputs").get<std::string>()));
  if (cfg_.size) rc.sizes = {*cfg_.size};
  rc.kernel_root = cfg_.kernel_root;
  rc.metrics_on = "host";  // no metrics kernels to build for rows that measure nothing
  rc.dry_run = true;
  rc.input_warnings = false;  // the worker warned of them, or would have
  rc.skip_keys = request.at("skip_keys").get<std::set<std::string>>();
  for (const ResultRow &r : result.rows) rc.skip_keys.insert(r.key);
  rc.only = [&plan](const AppDescriptor &app, const Variant &v, const WorkGroup &wg) {
    const auto a = plan.apps.find(app.name);
    if (a == plan.apps.end()) return false;
    const auto e = a->second.find(variant_id(v));
    if (e == a->second.end()) return false;
    const auto &shapes = e->second.second;
    return std::find(shapes.begin(), shapes.end(), wg) != shapes.end();
  };
  std::size_t lost = 0;
  Runner(env_, rc).run([&](ResultRow row) {
    if (row.status == Status::kPlanned) {  // a verdict judged before building stays what it is
      row.status = Status::kRunFailed;
      row.reason = "not measured: " + result.lost;
      ++lost;
    }
    result.rows.push_back(std::move(row));
  });
  std::fprintf(stderr, "kperf: %s; its %zu unmeasured configuration%s are run_failed rows\n",
               result.lost.c_str(), lost, lost == 1 ? "" : "s");
}

}  // namespace kperf
