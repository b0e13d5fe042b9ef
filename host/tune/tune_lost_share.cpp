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

Tuner::Plan TuneStages::plan_of_request(const nlohmann::json &request) const {
  const TuneSpace space = t_.donor_space();
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

void TuneStages::add_unmeasured(const StageWorker &worker, StageWorker::Result &result) {
  const nlohmann::json request = worker.request();
  const Plan plan = plan_of_request(request);
  // The share's rows as a dry run of it names them (keys, inputs at their sizes, every axis),
  // nothing built or launched; the rows the worker did return, or had measured before, are
  // skipped.
  RunConfig rc = plan_config(plan, inputs_from_name(request.at("inputs").get<std::string>()));
  rc.metrics_on = "host";  // no metrics kernels to build for rows that measure nothing
  rc.dry_run = true;
  rc.input_warnings = false;  // the worker warned of them, or would have
  rc.skip_keys = request.at("skip_keys").get<std::set<std::string>>();
  for (const ResultRow &r : result.rows) rc.skip_keys.insert(r.key);
  std::size_t lost = 0;
  Runner(t_.env_, rc).run([&](ResultRow row) {
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
