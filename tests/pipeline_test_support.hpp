// What the pipeline tests share (pipeline_tests.cpp, fused_chain_tests.cpp, fused_rows_tests.cpp):
// variants by their axes' names, grids of outputs and inputs, the runner's options for tests.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core.hpp"
#include "fused_model.hpp"
#include "io.hpp"
#include "schemes.hpp"
#include "test_support.hpp"

namespace kperf::test {

// Integers 0..15: every stage-1 output computed exactly in float and in double (binomial weights
// over 256, medians, rows:2 and cols:2 interpolations by halves), so that the half the device
// rounds an intermediate to is the model's: a model in double rounding to half elsewhere may land
// on the other side of a rounding midpoint than the device's float does.
inline Grid small_integers(int w, int h, unsigned seed) {
  Grid g = random_grid(w, h, seed, 0.0f, 16.0f);
  for (float& v : g.data) v = std::floor(v);
  return g;
}

inline Variant variant_of(const char* scheme, const char* recon, const char* precision,
                          const char* load = "local", const char* output = "none",
                          const char* perforate = "device") {
  AxesSpec a;
  a.schemes = scheme;
  a.recons = recon;
  a.precisions = precision;
  a.loads = load;
  a.outputs = output;
  a.output_recons = "nn";
  a.perforates = perforate;
  return parse_variants(a).front();
}

inline Grid as_grid(const std::vector<float>& values, int w, int h) {
  Grid g(w, h);
  g.data = values;
  return g;
}

// The test kernels, no warm-up, `reps` timed chain runs, every stage's output read back, errors
// where kperf pipeline computes them.
inline CoreOptions test_options(int reps) {
  CoreOptions opt;
  opt.kernel_root = KPERF_TEST_KERNEL_ROOT;
  opt.warmup = 0;
  opt.reps = reps;
  opt.read_outputs = true;
  opt.metrics_on = "device";
  opt.ssim = false;
  return opt;
}

// Chains measured as kperf pipeline measures them, on an input bound without a truth: through the
// measuring core, every stage's output read back.
class ChainBench {
 public:
  ChainBench(ClEnv& env, CoreOptions options) : core_(env, std::move(options)) {}
  Measurement run(const Chain& chain, const Grid& input) {
    std::vector<const AppDescriptor*> apps;
    for (const PipelineStage& s : chain) apps.push_back(s.app);
    BoundInput in = bind_input(apps, "input", input);
    core_.bind(in);
    return core_.measure(in, chain, chain_key("test", chain, "input", input.width, input.height),
                         MeasureMode::kTimed);
  }

 private:
  Core core_;
};

}  // namespace kperf::test
