// The runner's workloads: device inputs per storage layout, the half-image probe, the launch
// checks before a build, and the truth every configuration's error is measured against.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "fault_journal.hpp"
#include "kernel_axes.hpp"
#include "runner_internal.hpp"
#include "storage.hpp"
#include "structural_axes.hpp"

namespace kperf {

DeviceUpload& Runner::input_for(Workload& w, const Variant& v) {
  return device_upload(env_, w.uploads, v, w.app->radius, w.input, !w.app->traits.iterated,
                       [this]() -> const std::string& { return half_image_problem(); });
}

const std::string& Runner::half_image_problem() {
  if (!half_image_problem_) half_image_problem_ = probe_half_images(env_, cfg_.kernel_root);
  return *half_image_problem_;
}

std::string Runner::build_options(const AppDescriptor& app, const Variant& v, WorkGroup wg) const {
  return kernel_build_options(app, v, wg, cfg_.kernel_root, cfg_.params, cfg_.extra_build_options);
}

std::optional<Verdict> check_launch(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                                    const DeviceInfo& dev) {
  if (auto verdict = check_variant(v, app, wg)) return verdict;
  if (v.load_path().reads_image && !dev.image_support)
    return Verdict{"not_applicable", "the image load path needs image support and " + dev.name +
                                         " has none (CL_DEVICE_IMAGE_SUPPORT is false)"};
  if (auto verdict = check_work_group(wg, dev)) return verdict;
  const std::size_t tile_bytes = tile_local_bytes(app, v, wg);
  if (tile_bytes > dev.local_mem_size)
    return Verdict{"invalid_config", "tile needs " + std::to_string(tile_bytes) +
                                         " bytes of local memory; device has " +
                                         std::to_string(dev.local_mem_size)};
  return std::nullopt;
}

std::optional<Verdict> check_work_group(WorkGroup wg, const DeviceInfo& dev) {
  const std::size_t items = static_cast<std::size_t>(wg.x) * wg.y;
  if (items > dev.max_work_group_size)
    return Verdict{"invalid_config", "work-group " + std::to_string(wg.x) + "x" +
                                         std::to_string(wg.y) + " = " + std::to_string(items) +
                                         " work-items exceeds CL_DEVICE_MAX_WORK_GROUP_SIZE " +
                                         std::to_string(dev.max_work_group_size)};
  for (int d = 0; d < 2; ++d) {
    const std::size_t side = d == 0 ? wg.x : wg.y;
    if (dev.max_work_item_sizes.size() > static_cast<std::size_t>(d) &&
        side > dev.max_work_item_sizes[d])
      return Verdict{"invalid_config",
                     std::string("work-group ") + (d == 0 ? "x" : "y") + " size " +
                         std::to_string(side) + " exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES[" +
                         std::to_string(d) + "] = " + std::to_string(dev.max_work_item_sizes[d])};
  }
  return std::nullopt;
}

std::size_t tile_local_bytes(const AppDescriptor& app, const Variant& v, WorkGroup wg) {
  if (!uses_local_tile(app, v)) return 0;
  // As kperf_tile.cl lays the tile out: rows padded to 16-byte chunks when the block width is a
  // multiple of 4, by 4 slots each side (8 for half input where the width is a multiple of 8).
  const WorkGroup block = block_of(v, wg);
  const int r = app.radius;
  // The fused li fill of a frame-free scheme reads the next block's first computed line from a
  // tile one period larger along y, and along x where the period is 3 or more
  // (kperf_tile.cl: KPERF_OUT_NEXT_Y, KPERF_OUT_NEXT_X).
  const bool fused_li = !v.output.none() && v.output_recon == Recon::kLi && v.fill().launches == 1;
  // (Not where the blocks overlap: the block holds those lines.)
  const bool next = fused_li && v.scheme->frame_free;
  const int ext_y = next && v.output.ky() > 1 && !blocks_overlap_y(v, wg) ? v.output.ky() : 0;
  const int ext_x = next && v.output.kx() > 2 && !blocks_overlap_x(v, wg) ? v.output.kx() : 0;
  // Blocks that overlap along x start at multiples of a work-item's columns (KPERF_BLOCK_X_ALIGN).
  const int align = blocks_overlap_x(v, wg) ? block.x / wg.x : block.x;
  const int pad = v.precision_info().in->bytes == 2 && align % 8 == 0 ? 8 : 4;
  const int stride =
      align % 4 == 0 && r <= 4 ? block.x + 2 * pad + (ext_x + 3) / 4 * 4 : block.x + 2 * r + ext_x;
  // rows:k li over whole periods reads the kept row below the tile's last rows too
  // (perforate_lines.cl: KPERF_TILE_EXTRA_ROWS).
  const int extra_rows = std::string(v.scheme->family) == "rows" && v.recon == Recon::kLi &&
                                 v.output.ky() == 1 && wg.py % v.skip == 0
                             ? v.skip - 1
                             : 0;
  return static_cast<std::size_t>(stride) *
         static_cast<std::size_t>(block.y + 2 * r + ext_y + extra_rows) * sizeof(float);
}

nlohmann::ordered_json Runner::energy_json() const {
  if (!cfg_.energy_requested) return nullptr;
  if (!cfg_.energy) return {{"source", nullptr}, {"reason", cfg_.energy_absent_reason}};
  nlohmann::ordered_json j = {{"source", cfg_.energy->source()},
                              {"counter", cfg_.energy->describe()},
                              {"idle_power_w", idle_power_w_},
                              {"counter_period_s", counter_period_s_},
                              {"window_s", cfg_.energy_options.window_s},
                              {"reps", cfg_.energy_options.reps}};
  if (!idle_problem_.empty()) j["idle_problem"] = idle_problem_;
  return j;
}

AppTruth& Runner::truth_for(const AppDescriptor& app) {
  auto it = truths_.find(app.name);
  if (it == truths_.end()) {
    PhaseTimer timer(phase_s_, "compile");
    it = truths_
             .emplace(app.name, std::make_unique<AppTruth>(env_, app, cfg_.kernel_root, cfg_.params,
                                                           cfg_.extra_build_options))
             .first;
  }
  return *it->second;
}

void Runner::compute_truth(Workload& w, int iterations) {
  const AppDescriptor& app = *w.app;
  if (app.point) {
    w.reference = "cpu-double";
    w.truth =
        reference_run(app, w.input_d, w.power_d ? &*w.power_d : nullptr, iterations, cfg_.params);
    return;
  }
  try {
    AppTruth& truth = truth_for(app);
    w.reference = truth.kind();
    if (!truth.fp64_problem().empty() && warned_truth_.insert(app.name).second)
      std::fprintf(stderr, "warning: %s: its truth is its float accurate kernel; %s\n",
                   app.name.c_str(), truth.fp64_problem().c_str());
    w.truth = truth.run(w.input_d);
  } catch (const BuildError& e) {
    // The configurations would not build either: each becomes a build_failed row with the log.
    w.truth_problem = std::string("the accurate truth kernel does not build: ") + e.what();
    w.truth_log = e.log();
    w.truth = GridD(w.width, w.height);
  } catch (const cl::Error& e) {
    std::string why;
    w.truth = GridD(w.width, w.height);
    if (device_responds(why)) {
      w.truth_status = "run_failed";
      w.truth_problem = "the accurate truth kernel failed: " + describe(e);
      return;
    }
    // The truth kernel faulted the device: every configuration of the workload is a fault, and
    // no further device work is possible in this process.
    lost_ = true;
    nlohmann::ordered_json workload = workload_json(w);
    workload["reason"] = "the accurate truth kernel faulted the device: " + describe(e) +
                         "; then the device accepted no more commands (" + why + ")";
    journal_workload_fault(workload);
    throw DeviceLost(app.name + " on " + w.input_name + ": " +
                     workload["reason"].get<std::string>());
  }
}

nlohmann::ordered_json Runner::workload_json(const Workload& w) const {
  nlohmann::ordered_json j = cfg_.journal_fields;
  j["app"] = w.app->name;
  j["input"] = w.input_name;
  j["width"] = w.width;
  j["height"] = w.height;
  return j;
}

GridEvaluator Runner::model_evaluator(const AppDescriptor& app) {
  if (app.point) return {};
  return [this, &app](const GridD& tiles) { return truth_for(app).run(tiles); };
}

std::optional<Verdict> Runner::static_check(const Workload& w, const Variant& v,
                                            WorkGroup wg) const {
  if (auto verdict = check_launch(*w.app, v, wg, env_.info())) return verdict;
  if (!w.alloc_problem.empty()) return Verdict{"invalid_config", w.alloc_problem};
  if (!w.truth_problem.empty()) return Verdict{w.truth_status, w.truth_problem};
  if (const auto misfit = output_misfit(v.output, w.width, w.height))
    return Verdict{"not_applicable", "output scheme " + *misfit};
  return std::nullopt;
}

}  // namespace kperf
