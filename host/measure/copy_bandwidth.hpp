// The roofline's yardstick: a copy kernel's bandwidth per grid size (kernels/copy.cl), timed as
// the kernels are (under --cold after the same cache flush) and checked to copy its input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "core.hpp"

namespace kperf {

class CopyBandwidth {
 public:
  CopyBandwidth(ClEnv& env, Core& core) : env_(env), core_(core) {}
  // The larger of the scalar and float4 copies' bandwidth in GB/s at this size, measured once.
  double gbps_for(int width, int height);
  // Per size measured: {width, height, scalar_gbps, float4_gbps, copy_gbps, half_gbps, ...}.
  nlohmann::ordered_json json() const;
  // The copy bandwidth at the largest size measured.
  double largest_gbps() const;

 private:
  struct CopyResult {
    int width, height;
    double scalar_gbps, vec4_gbps;
    std::string status;
    // Copies of halves at the half precisions' stored sizes (copy.cl): raw, through float and
    // back, half to float. Context only: the roofline stays the float copy's.
    double half_gbps = 0, half_convert_gbps = 0, half_to_float_gbps = 0;
    // --cold: a cache flush before each timed copy, as before each timed sample of a kernel
    // (`flushes` of them, all the copies' together).
    bool cold = false;
    long flushes = 0;
  };
  ClEnv& env_;
  Core& core_;
  std::vector<CopyResult> copies_;
};

}  // namespace kperf
