// Bound inputs and their truths (bound_input.hpp): computed once per input and command, cached
// across a tune's stages, and judged by one rule.
#include "bound_input.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "chain.hpp"
#include "fault_journal.hpp"
#include "inputs.hpp"
#include "metrics.hpp"
#include "parallel.hpp"
#include "results.hpp"

namespace kperf {

namespace {

double wall_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

BoundInput bind_input(std::vector<const AppDescriptor*> apps, std::string name, Grid input,
                      std::optional<Grid> power, int iterations) {
  BoundInput in;
  in.apps = std::move(apps);
  in.name = std::move(name);
  in.width = input.width;
  in.height = input.height;
  in.input = std::move(input);
  in.power = std::move(power);
  in.iterations = iterations;
  in.input_finite =
      count_nonfinite(in.input.data) == 0 && (!in.power || count_nonfinite(in.power->data) == 0);
  return in;
}

TruthSource::TruthSource(ClEnv* env, std::string kernel_root, AppParams params,
                         std::string extra_options, std::shared_ptr<TruthCache> cache)
    : env_(env),
      kernel_root_(std::move(kernel_root)),
      extra_options_(std::move(extra_options)),
      params_(std::move(params)),
      cache_(std::move(cache)) {}

AppTruth& TruthSource::kernel_of(const AppDescriptor& app) {
  auto it = kernels_.find(app.name);
  if (it == kernels_.end()) {
    if (!env_) throw std::logic_error("TruthSource: the user app " + app.name + " needs a device");
    const double start = wall_now();
    try {
      it = kernels_
               .emplace(app.name, std::make_unique<AppTruth>(*env_, app, kernel_root_, params_,
                                                             extra_options_))
               .first;
    } catch (...) {
      compile_s_ += wall_now() - start;
      throw;
    }
    compile_s_ += wall_now() - start;
  }
  return *it->second;
}

GridEvaluator TruthSource::evaluator(const AppDescriptor& app) {
  if (!app.user()) return {};
  AppTruth* truth = &kernel_of(app);
  return [truth](const GridD& tiles) { return truth->run(tiles); };
}

bool TruthSource::cached(BoundInput& in) {
  if (!cache_) return false;
  std::lock_guard<std::mutex> lock(cache_->mutex);
  const auto it = cache_->grids.find(truth_key(in));
  if (it == cache_->grids.end()) return false;
  in.truths = Truths(it->second);
  ++cache_->hits;
  return true;
}

// Only a truth that was computed (not a failed truth kernel's) is kept.
void TruthSource::keep(const BoundInput& in) {
  if (!cache_ || !in.truth_problem.empty()) return;
  std::size_t bytes = 0;
  for (const GridD& t : in.truths) bytes += t.data.size() * sizeof(double);
  std::lock_guard<std::mutex> lock(cache_->mutex);
  if (cache_->bytes + bytes > cache_->max_bytes) return;
  if (cache_->grids.emplace(truth_key(in), in.truths.shared()).second) cache_->bytes += bytes;
}

bool TruthSource::compute(BoundInput& in) {
  const double start = wall_now();
  struct Timer {
    double& seconds;
    double start;
    ~Timer() { seconds += wall_now() - start; }
  } timer{seconds_, start};
  in.truths.clear();
  in.references.clear();
  auto fail = [&](std::size_t k, Status status, const std::string& what) {
    in.truths.clear();
    in.truth_status = status;
    in.truth_problem = stage_prefix(in.apps.size(), k, *in.apps[k]) + what;
  };
  // References name each stage's truth even when the grids come from the cache.
  for (const AppDescriptor* app : in.apps) {
    if (!app->user()) {
      in.references.push_back("cpu-double");
      continue;
    }
    try {
      AppTruth& truth = kernel_of(*app);
      in.references.push_back(truth.kind());
      if (!truth.fp64_problem().empty() && warned_.insert(app->name).second)
        std::fprintf(stderr, "warning: %s: its truth is its float accurate kernel; %s\n",
                     app->name.c_str(), truth.fp64_problem().c_str());
    } catch (const BuildError& e) {
      // The configurations would not build either: each becomes a build_failed row with the log.
      fail(in.references.size(), Status::kBuildFailed,
           std::string("the accurate truth kernel does not build: ") + e.what());
      in.truth_log = e.log();
      return true;
    }
  }
  if (!cached(in)) {
    std::vector<GridD> grids;
    GridD current = to_double(in.input.data, in.width, in.height);
    std::optional<GridD> power;
    if (in.power) power = to_double(in.power->data, in.width, in.height);
    for (std::size_t k = 0; k < in.apps.size(); ++k) {
      const AppDescriptor& app = *in.apps[k];
      try {
        current = app.user() ? kernel_of(app).run(current)
                             : reference_run(app, current, k == 0 && power ? &*power : nullptr,
                                             k == 0 ? in.iterations : 1, params_);
      } catch (const cl::Error& e) {
        std::string why;
        if (device_responds(*env_, why)) {
          fail(k, Status::kRunFailed, "the accurate truth kernel failed: " + describe(e));
          return true;
        }
        fail(k, Status::kDeviceFault,
             "the accurate truth kernel faulted the device: " + describe(e) +
                 "; then the device accepted no more commands (" + why + ")");
        return false;
      }
      // The last stage's grid moves: only a chain's earlier stages are copied.
      grids.push_back(k + 1 == in.apps.size() ? std::move(current) : current);
    }
    in.truths = Truths(std::move(grids));
    keep(in);
  }
  judge_truth(in);
  return true;
}

std::vector<GridD> chain_truth(const std::vector<const AppDescriptor*>& apps, const Grid& input,
                               const AppParams& params) {
  TruthSource truths(nullptr, "", params);
  BoundInput in = bind_input(apps, "input", input);
  truths.compute(in);
  return in.truths.grids();
}

void judge_truth(BoundInput& in) {
  in.truth_nonfinite.clear();
  for (const GridD& t : in.truths) {
    const long size = static_cast<long>(t.data.size());
    const int chunks = host_threads_for(size);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(chunks), 0);
    parallel_chunks(size, chunks, [&](int c, long begin, long end) {
      std::int64_t n = 0;
      for (long i = begin; i < end; ++i) n += !std::isfinite(t.data[static_cast<std::size_t>(i)]);
      counts[static_cast<std::size_t>(c)] = n;
    });
    std::int64_t n = 0;
    for (std::int64_t c : counts) n += c;
    in.truth_nonfinite.push_back(n);
  }
  if (!in.truth_problem.empty() || !in.input_finite) return;
  for (std::size_t k = 0; k < in.truths.size(); ++k) {
    if (in.truth_nonfinite[k] == 0) continue;
    in.truth_status = Status::kReferenceFailed;
    in.truth_problem =
        (in.truths.size() > 1 ? "stage " + std::to_string(k + 1) + ": " : std::string()) +
        broken_truth_reason(in.truth_nonfinite[k],
                            static_cast<std::int64_t>(in.truths[k].data.size()), in.references[k]);
    return;
  }
}

bool journaled_truth(TruthSource& truths, BoundInput& in, const nlohmann::ordered_json& workload) {
  if (const auto fault = journaled_workload_fault(workload)) {
    in.truth_status = Status::kDeviceFault;
    in.truth_problem = *fault;
    return true;
  }
  const bool device_work = std::any_of(in.apps.begin(), in.apps.end(),
                                       [](const AppDescriptor* app) { return app->user(); });
  if (device_work) journal_begin_workload(workload, "truth kernels");
  const bool kept = truths.compute(in);
  if (!kept) {
    nlohmann::ordered_json fault = workload;
    fault["reason"] = in.truth_problem;
    journal_workload_fault(fault);
  }
  if (device_work) journal_end();
  return kept;
}

std::string truth_key(const BoundInput& in) {
  std::string key;
  for (const AppDescriptor* app : in.apps) key += app->name + ">";
  return key + "|" + input_key(in) + "|" + std::to_string(in.iterations);
}

std::string input_key(const BoundInput& in) {
  if (!in.input_key_memo.empty()) return in.input_key_memo;
  // The name and size, and every element (the second input's too): one name given to two grids
  // (a file's stem in two folders, a test's edited copy) is two inputs. Four independent FNV
  // lanes, so that the multiplies overlap: milliseconds at 2048^2.
  std::uint64_t lanes[4] = {1469598103934665603ull, 1, 2, 3};
  for (const Grid* g : {&in.input, in.power ? &*in.power : nullptr}) {
    if (!g) continue;
    const std::vector<float>& d = g->data;
    for (std::size_t i = 0; i < d.size(); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &d[i], sizeof bits);
      lanes[i % 4] = (lanes[i % 4] ^ bits) * 1099511628211ull;
    }
  }
  std::uint64_t h = 0;
  for (std::uint64_t lane : lanes) h = (h ^ lane) * 1099511628211ull;
  in.input_key_memo = in.name + "|" + std::to_string(in.width) + "x" + std::to_string(in.height) +
                      "|" + std::to_string(h);
  return in.input_key_memo;
}

}  // namespace kperf
