// Result rows: one per configuration, their JSON form (SPEC section 9), and the derived
// per-group fields (best work-group, speedups) computed over a whole result set.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "stats.hpp"
#include "status.hpp"

namespace kperf {

constexpr int kSchemaVersion = 2;

struct ResultRow {
  std::string key;  // app/scheme/recon[/axes]/wg:WxH/input/WIDTHxHEIGHT
  std::string app, scheme, recon;
  int skip = 1;
  // Version-2 axes (SPEC 10); their defaults are the version-1 configuration.
  std::string load = "local";
  std::string output = "none";
  std::string output_recon = "none";
  std::string output_fill;  // "fused" or "separate" under an output scheme, else empty
  std::string precision = "f32";
  std::string perforate = "device";
  double iterations_skip = 0;
  // The kernel axes (kernel_axes.hpp) that apply to the app, by result field: "relax" -> "skip".
  std::map<std::string, std::string> kernel_axes;
  std::string axes;     // the non-default axes as key segments ("load:global/out:rows:2/nn")
  std::string variant;  // Variant::id(): scheme/recon[/axes]
  std::string family;   // Variant::family()
  int wg_x = 0, wg_y = 0;
  int vec = 1;  // outputs per work-item along x
  int py = 1;   // outputs per work-item along y
  std::string input_name;
  int width = 0, height = 0;
  int iterations = 1;  // hotspot launches per sample
  Status status = Status::kOk;
  std::string reason, build_log;
  // What the driver reports of the built kernel (clGetKernelWorkGroupInfo), on every row whose
  // kernel was created: the largest work-group it can launch (what rejects a launch shape as
  // invalid_config), its private memory per work-item and local memory per work-group.
  struct KernelInfo {
    std::uint64_t max_work_group_size = 0, private_mem_bytes = 0, local_mem_bytes = 0;
  };
  std::optional<KernelInfo> kernel_info;
  std::string note;  // a caveat on an ok row (e.g. a diverging hotspot)
  std::vector<std::uint64_t> samples_ns;
  // --max-cv: why sampling stopped: "cv" (the samples' cv reached the limit) or "max_reps".
  std::string stop_reason;
  // --rounds: the device timestamp of each round's first timed launch (the rounds' samples lie
  // in samples_ns in order).
  std::vector<std::uint64_t> round_start_ns;
  std::optional<TimingStats> time;
  double bytes_model = 0, gbps = 0, copy_gbps = 0, roofline = 0;
  std::string primary_metric;
  // What the error is measured against: "cpu-double" (a built-in's C++ reference), "fp64-kernel"
  // or "device-accurate" (a user app's own accurate kernel, in double or, without fp64, float).
  std::string reference;
  std::optional<ErrorMetrics> error;
  // Relaxed rows (a race by design): the primary metric of each of several downloads.
  std::vector<double> error_reps;
  // --transfers: per repetition, upload (write), download (read), host packing, the launches
  // of that repetition and their sum (end to end), in nanoseconds.
  struct TransferSamples {
    std::vector<std::uint64_t> write, read, host_pack, kernel, end_to_end;
    // Where the host packs or converts the input: a plain memcpy of the same bytes into the same
    // pinned memory on the same threads, per repetition, and those bytes.
    std::vector<std::uint64_t> host_memcpy;
    std::uint64_t host_bytes = 0;
    // The packing's floor: the grid lines it reads, read alone on the same threads
    // (read_source_lines), per repetition, and their bytes. Absent from files before it.
    std::vector<std::uint64_t> host_read_lines;
    std::uint64_t host_read_bytes = 0;
    bool empty() const { return end_to_end.empty(); }
  } transfer_samples;
  std::optional<double> model_max_abs;  // --verify: distance to the CPU model of the scheme
  // --energy: the row's energy object (energy.hpp: energy_json), null where no counter exists
  // or it failed (energy_problem says why); absent from the JSON without --energy.
  bool energy_requested = false;
  nlohmann::ordered_json energy;
  std::string energy_problem;
  // --energy nvml: the SM and memory clocks and throttle reasons after the timed samples.
  nlohmann::ordered_json clocks;
  std::optional<double> speedup, speedup_same_wg;
  // Against Paraprox's baseline: accurate on the global load path at its best work-group.
  std::optional<double> speedup_vs_global;
  // --transfers: the accurate baseline's end-to-end (resp. write + read) median at its best
  // work-group over this row's.
  std::optional<double> speedup_end_to_end, speedup_transfer;
  bool best_wg = false;
  std::string output_file;
  // kperf merge: the physical device that measured the row (host and PCI bus), so that derived
  // speedups stay within one device; empty in a single run.
  std::string device_id;
  // --shard: a baseline configuration this shard measured for its own speedups but does not own
  // (kperf merge keeps it apart from the results).
  bool shard_baseline = false;

  bool ok() const { return status == Status::kOk; }
  // The configuration crashed or faulted the device (SPEC 14): its reason holds the driver's words.
  bool device_faulted() const { return status == Status::kDeviceFault; }
  // The truth it would be measured against is non-finite on a finite input (SPEC 15): nothing was
  // measured, and the command exits with the fault status.
  bool reference_failed() const { return status == Status::kReferenceFailed; }
};

// The reason of a reference_failed row: how many of the truth's elements are non-finite on a
// finite input, and which truth it was ("cpu-double", "fp64-kernel", "device-accurate", or a
// chain's stage).
std::string broken_truth_reason(std::int64_t nonfinite, std::int64_t elements,
                                const std::string& truth);

// app/scheme/recon[/axes]/wg:WXxWY[vV][yP]/input/WIDTHxHEIGHT ("v4", "y2" only when not 1; axes
// only when some axis is not at its default, so version-1 keys are unchanged).
std::string make_key(const std::string& app, const std::string& scheme, const std::string& recon,
                     const std::string& axes, int wg_x, int wg_y, int vec, int py,
                     const std::string& input, int width, int height);
// "16x8", "16x8v4", "16x8v4y2".
std::string wg_label(int wg_x, int wg_y, int vec, int py);

nlohmann::ordered_json to_json(const ResultRow& row);
// A row's time_ns block: median, mean, min, max, stddev and cv of the samples.
nlohmann::ordered_json stats_json(const TimingStats& t);
TimingStats stats_from_json(const nlohmann::json& t);  // throws nlohmann::json::exception
ResultRow row_from_json(const nlohmann::json& j);      // throws nlohmann::json::exception
// Each approximation axis's field and the value a row has when the field is absent (rows written
// before the axis existed, and kernel axes of apps they do not apply to): the context's
// "axis_defaults", which readers such as report.py apply instead of keeping their own table. An
// absent "output_fill" is "separate" where "output" is not "none" (the only fill before the
// axis) and absent otherwise.
nlohmann::ordered_json axis_defaults_json();

// Marks the fastest work-group of every (app, input, size, scheme, recon, axes) group and sets
// the papers' speedup (accurate at its best work-group over the variant at its best), the
// same-work-group speedup and the speedup over Paraprox's baseline (accurate, global load path)
// on every ok row.
void annotate(std::vector<ResultRow>& rows);

// Human summary: per app x scheme x recon x input, the best work-group, median, speedup, error.
std::string summary_table(const std::vector<ResultRow>& rows);

}  // namespace kperf
