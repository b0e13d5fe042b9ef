// `kperf check`'s proofs that an app is perforation-safe: it reads its input only through the
// tile contract, so skipped elements never reach its outputs, and every way of running a
// configuration (load path, where perforation happens, one or two launches, again) agrees.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "apps.hpp"
#include "cl_env.hpp"
#include "io.hpp"
#include "results.hpp"
#include "schemes.hpp"

namespace kperf {

// Rows and downloaded outputs of configurations run once each (no warm-up, one sample).
struct OutputRun {
  std::vector<ResultRow> rows;
  std::map<std::string, Grid> outputs;  // by result key, for ok rows
  const ResultRow* find(const std::string& app, const Variant& v, WorkGroup wg) const;
  // The output of that configuration, or nullptr where it did not run ok.
  const Grid* output(const std::string& app, const Variant& v, WorkGroup wg) const;
};

struct OutputRunOptions {
  std::string kernel_root;
  std::string extra_build_options;
  AppParams params;
  bool verify = false;  // also hold each output against the CPU model (row.model_max_abs)
  // An iterated app's second input and steps (hotspot: the power grid), --transfers, and the
  // configurations to run (empty: all).
  const Grid* power = nullptr;
  int iterations = 1;
  bool transfers = false;
  std::function<bool(const Variant&, const WorkGroup&)> only;
};

// Runs every (variant, shape) of `apps` on `input` through the runner and keeps the outputs.
OutputRun run_for_outputs(ClEnv& env, const std::vector<const AppDescriptor*>& apps,
                          const std::vector<Variant>& variants, const std::vector<WorkGroup>& wgs,
                          const Grid& input, const OutputRunOptions& options);

// The elements variant `v` never loads, set to NaN in `input`: for rows/cols schemes (every
// work-group skips the same lines) over the whole grid, otherwise those work-group (gx, gy) does
// not read (a stencil's halo is another group's interior). Returns how many.
std::size_t poison_skipped(const Variant& v, int radius, WorkGroup wg, int gx, int gy, Grid& input);
// Whether poison_skipped covers the whole grid for `v` (else only group (gx, gy) is comparable).
inline bool poisons_whole_grid(const Variant& v) { return v.scheme->takes_skip; }

struct CheckResult {
  std::string check;   // poison, load-paths, host-device, output-fills, reproducible, model...
  std::string config;  // the configuration it concerns (variant id and shape)
  bool pass = false;
  std::string detail;  // what differed, where; or what was compared
};

// The names of the proofs, in the order they run ("runs", a configuration that did not run, is
// reported by whichever proof ran it).
const std::vector<std::string>& check_names();

// The proofs named in `checks` (empty: every one) for `app` on `input` (finite values; a 96x40
// grid shows every scheme's edges). Each runs only the configurations it compares.
std::vector<CheckResult> check_app(ClEnv& env, const AppDescriptor& app, const Grid& input,
                                   const OutputRunOptions& options,
                                   const std::vector<std::string>& checks = {});

}  // namespace kperf
