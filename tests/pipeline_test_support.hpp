// What the pipeline tests share (pipeline_tests.cpp, fused_chain_tests.cpp): variants by their
// axes' names, grids of outputs, the runner's options for tests.
#pragma once

#include <string>
#include <vector>

#include "io.hpp"
#include "pipeline.hpp"
#include "schemes.hpp"

namespace kperf::test {

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

// The test kernels, no warm-up, `reps` timed chain runs.
inline PipelineOptions test_options(int reps) {
  PipelineOptions opt;
  opt.kernel_root = KPERF_TEST_KERNEL_ROOT;
  opt.warmup = 0;
  opt.reps = reps;
  return opt;
}

}  // namespace kperf::test
