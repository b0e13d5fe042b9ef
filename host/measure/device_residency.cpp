// Inputs and truths kept on the device for a whole command (device_residency.hpp).
#include "device_residency.hpp"

#include <algorithm>
#include <cmath>

#include "io.hpp"
#include "metrics.hpp"

namespace kperf {

std::shared_ptr<const DeviceTruth> upload_truth(ClEnv& env, const std::vector<double>& truth,
                                                int width, int height) {
  const std::size_t bytes = truth.size() * sizeof(double);
  if (bytes > env.info().max_mem_alloc_size ||
      static_cast<long long>(width) * height > kMaxGridElements)
    return nullptr;
  auto t = std::make_shared<DeviceTruth>();
  t->buffer = cl::Buffer(env.context(), CL_MEM_READ_ONLY, bytes);
  env.queue().enqueueWriteBuffer(t->buffer, CL_TRUE, 0, bytes, truth.data());
  t->width = width;
  t->height = height;
  for (double v : truth)
    if (std::isfinite(v)) t->max_abs = std::max(t->max_abs, std::fabs(v));
  std::tie(t->c1, t->c2) = ssim_constants(truth);
  return t;
}

void DeviceResidency::touch(Entry& e, const std::string& key) {
  if (e.listed) recent_.erase(e.use);
  recent_.push_front(key);
  e.use = recent_.begin();
  e.listed = true;
}

std::size_t DeviceResidency::entry_bytes(const Entry& e) const {
  std::size_t bytes = e.truth ? e.truth->bytes() : 0;
  if (e.uploads)
    for (const auto& [layout, up] : *e.uploads)
      bytes += (up.buffer() ? up.host.size() : 0) + (up.image ? up.host.size() : 0);
  return bytes;
}

void DeviceResidency::trim() {
  std::size_t total = 0;
  for (const auto& [key, e] : entries_) total += entry_bytes(e);
  // (A raw pointer into an entry, such as a Prepared chain's input, is only taken while a bound
  // input holds the entry's uploads.)
  // From the least recently used; an entry a bound input still holds stays.
  for (auto it = recent_.end(); total > max_bytes_ && it != recent_.begin();) {
    --it;
    Entry& e = entries_.at(*it);
    const bool held =
        (e.uploads && e.uploads.use_count() > 1) || (e.truth && e.truth.use_count() > 1);
    if (held) continue;
    total -= entry_bytes(e);
    ++let_go_;
    entries_.erase(*it);
    it = recent_.erase(it);
  }
}

std::shared_ptr<DeviceUploads> DeviceResidency::uploads(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entries_["input:" + key];
  touch(e, "input:" + key);
  if (e.uploads) {
    ++inputs_reused_;
  } else {
    ++inputs_made_;
    e.uploads = std::make_shared<DeviceUploads>();
  }
  std::shared_ptr<DeviceUploads> held = e.uploads;  // held: trim keeps it
  trim();  // the uploads the last passes added count from here on
  return held;
}

std::shared_ptr<const DeviceTruth> DeviceResidency::truth(ClEnv& env, const std::string& key,
                                                          const std::vector<double>& grid,
                                                          int width, int height) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string name = "truth:" + key;
  auto it = entries_.find(name);
  if (it != entries_.end() && it->second.truth) {
    ++truths_reused_;
    touch(it->second, name);
    return it->second.truth;
  }
  std::shared_ptr<const DeviceTruth> t = upload_truth(env, grid, width, height);
  if (!t) return nullptr;
  ++truths_made_;
  Entry& e = entries_[name];
  e.truth = t;
  touch(e, name);
  trim();
  return t;
}

nlohmann::ordered_json DeviceResidency::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"max_bytes", max_bytes_},
          {"inputs_bound", inputs_made_},
          {"inputs_bound_again", inputs_reused_},
          {"truths_uploaded", truths_made_},
          {"truths_used_again", truths_reused_},
          {"let_go", let_go_},
          {"method",
           "each input's uploads (one per stored layout) and each truth kept on the device for "
           "the whole command; past max_bytes the least recently used not in use are let go"}};
}

}  // namespace kperf
