// What one command keeps on the device across its measuring passes: each input's uploads by
// stored layout and each truth's double-precision copy, so that kperf tune, whose stages each make
// a runner of their own, uploads an input once per layout and a truth once for the whole tune.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "device_upload.hpp"

namespace kperf {

// A truth on the device as the metrics kernels read it, with what they need to know of it.
struct DeviceTruth {
  cl::Buffer buffer;  // width x height doubles
  int width = 0, height = 0;
  double max_abs = 0;     // of its finite elements
  double c1 = 0, c2 = 0;  // SSIM's constants (ssim_constants)
  std::size_t bytes() const { return static_cast<std::size_t>(width) * height * sizeof(double); }
};

// `truth` uploaded; null where it does not fit in one allocation or its element count is not an
// int (the metrics kernels take it as one): the caller measures on the host.
std::shared_ptr<const DeviceTruth> upload_truth(ClEnv& env, const std::vector<double>& truth,
                                                int width, int height);

// The store. Within `max_bytes` of device memory: past it, the least recently used inputs and
// truths that no bound input holds are let go (and made again when asked for). Its table is
// locked, but the upload maps it hands out are filled by the measuring thread without it: one
// thread and one ClEnv use a residency (as a tune's stages do, one after the other).
class DeviceResidency {
 public:
  explicit DeviceResidency(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  // The uploads of the input `key` names (its name, size and contents' identity), shared by every
  // pass that binds it.
  std::shared_ptr<DeviceUploads> uploads(const std::string& key);
  // The truth `key` names, uploaded on first use (null as upload_truth says).
  std::shared_ptr<const DeviceTruth> truth(ClEnv& env, const std::string& key,
                                           const std::vector<double>& grid, int width, int height);
  // What was made and what was used again: the harness block's `device_residency`.
  nlohmann::ordered_json to_json() const;

 private:
  struct Entry {
    std::shared_ptr<DeviceUploads> uploads;
    std::shared_ptr<const DeviceTruth> truth;
    std::list<std::string>::iterator use;
    bool listed = false;
  };
  void touch(Entry& e, const std::string& key);
  void trim();
  std::size_t entry_bytes(const Entry& e) const;
  mutable std::mutex mutex_;
  std::size_t max_bytes_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> recent_;  // most recent first
  std::uint64_t inputs_made_ = 0, inputs_reused_ = 0, truths_made_ = 0, truths_reused_ = 0;
  std::uint64_t let_go_ = 0;
};

}  // namespace kperf
