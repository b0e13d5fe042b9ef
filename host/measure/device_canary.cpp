// The canary on the device (device_canary.hpp): the launches of a ladder's rungs and their
// accurate kernels on the sampled groups, the reduction of each window to its error sums, and the
// estimates from those.
#include "device_canary.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "io.hpp"
#include "storage.hpp"

namespace kperf {

namespace {

constexpr int kWindow = CanarySample::kWindowX * CanarySample::kWindowY;  // work-items a window
// What puts a program's groups on the canary's sample: this file before the app's text, and
// which neighbour groups an output scheme's fill needs.
const char* const kSampledGroups = "#include \"groups_sampled.cl\"\n";

// The accurate kernel's launch shape for a rung's block: the rung's own work-items where its
// block is theirs at one to four outputs along x, else the shape of fewest outputs per work-item
// (the larger vector on a tie) within `max_items` work-items. {0, 0} where none is.
WorkGroup accurate_shape(const AppDescriptor& app, WorkGroup rung_wg, WorkGroup block,
                         std::size_t max_items) {
  static const Variant accurate = parse_scheme("accurate");
  auto fits = [&](WorkGroup s) {
    return static_cast<std::size_t>(s.x) * s.y <= max_items && !check_variant(accurate, app, s);
  };
  if (block.x % rung_wg.x == 0 && block.y % rung_wg.y == 0) {
    const WorkGroup own{rung_wg.x, rung_wg.y, block.x / rung_wg.x, block.y / rung_wg.y};
    if ((own.vec == 1 || own.vec == 2 || own.vec == 4) && fits(own)) return own;
  }
  WorkGroup best{0, 0, 1, 1};
  for (int vec : {4, 2, 1})
    for (int py = 1; py <= block.y; ++py) {
      const WorkGroup s{block.x / vec, block.y / py, vec, py};
      if (block.x % vec || block.y % py || !fits(s)) continue;
      if (best.x == 0 || vec * py < best.vec * best.py) best = s;
    }
  return best;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

std::optional<std::string> DeviceCanary::unsupported(const ClEnv& env) {
  if (env.info().max_work_group_size < static_cast<std::size_t>(kWindow))
    return "the device's work-groups hold fewer than " + std::to_string(kWindow) +
           " work-items (one a window's output)";
  return std::nullopt;
}

std::optional<std::string> DeviceCanary::problem(const CanaryStage& rung) {
  if (auto why = canary_problem(rung)) return why;
  const Variant& v = rung.variant;
  if (blocks_overlap_y(v, rung.wg) || blocks_overlap_x(v, rung.wg))
    return v.id() + ": its groups' blocks overlap (the shared fill's li), so a group is not one " +
           "of the canary's blocks";
  if (!v.output.none() && v.fill().launches > 1)
    return v.id() + ": the separate fill's second launch reads computed lines that the groups " +
           "left out of the sample store";
  return std::nullopt;
}

std::array<std::size_t, 3> DeviceCanary::launch_offset(const CanaryLattice& lattice,
                                                       std::uint64_t seed) {
  constexpr int kMax = 1 << 16;
  if (lattice.groups_x >= kMax || lattice.groups_y >= kMax)
    throw std::invalid_argument("a launch of " + std::to_string(lattice.groups_x) + "x" +
                                std::to_string(lattice.groups_y) +
                                " groups: the sampled launch carries at most 65535 along an axis");
  return {static_cast<std::size_t>(lattice.groups_x), static_cast<std::size_t>(lattice.groups_y),
          static_cast<std::size_t>(canary_group_key(seed))};
}

DeviceCanary::DeviceCanary(ClEnv& env, std::string kernel_root, CanarySettings settings,
                           AppParams params, std::string extra_options)
    : env_(env),
      kernel_root_(std::move(kernel_root)),
      settings_(settings),
      params_(params),
      extra_options_(std::move(extra_options)) {}

cl::Kernel& DeviceCanary::kernel(const std::string& file, const std::string& options,
                                 const std::string& name, const std::string& prefix) {
  const std::string key = prefix + file + "\n" + options + "\n" + name;
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return it->second;
  auto source = sources_.find(file);
  if (source == sources_.end()) source = sources_.emplace(file, read_file(file)).first;
  return kernels_
      .emplace(key, cl::Kernel(env_.build(prefix + source->second, options), name.c_str()))
      .first->second;
}

cl::Buffer& DeviceCanary::buffer(const std::string& name, std::size_t bytes) {
  auto& [held, size] = buffers_[name];
  if (size < bytes) {
    held = cl::Buffer(env_.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1));
    size = bytes;
  }
  return held;
}

// What one estimate launches: every rung's sample and where its outputs and windows go. Rungs
// whose outputs are stored alike share an arena, one buffer in which each has the slot of a
// whole grid (only its sampled blocks are written), so that one reduction launch reads them all.
struct DeviceCanary::Plan {
  struct Rung {
    const CanaryStage* stage = nullptr;
    WorkGroup block;
    CanarySample sample;
    std::size_t arena = 0, offset = 0;  // the slot's first byte in its arena
    std::size_t first = 0;              // its first window
    cl::Buffer out;                     // its slot
  };
  struct Arena {
    const StorageType* type = nullptr;
    std::size_t bytes = 0, first = 0, windows = 0;
  };
  std::vector<Rung> rungs;
  std::vector<Arena> arenas;
  std::vector<cl_int> windows;  // per window: (y0, y1, x0, x1) in the grid, rung's first, count,
                                // its slot's first element (low, high 32 bits)
};

DeviceCanary::Plan DeviceCanary::plan(int width, int height, std::uint64_t seed,
                                      const std::vector<CanaryStage>& rungs) {
  Plan p;
  const std::size_t align = std::max<std::size_t>(env_.info().mem_base_addr_align_bits / 8, 128);
  const std::size_t elements = static_cast<std::size_t>(width) * height;
  for (const CanaryStage& s : rungs) {
    if (const auto why = problem(s)) throw std::invalid_argument(*why);
    // One truth grid: the accurate outputs of one app.
    if (s.app != rungs.front().app)
      throw std::invalid_argument("a device canary's rungs are one app's ladder: " +
                                  rungs.front().app->name + " and " + s.app->name);
    Plan::Rung r;
    r.stage = &s;
    r.block = block_of(s.variant, s.wg);
    r.sample = canary_sample(width, height, r.block, settings_, seed);
    launch_offset(r.sample.lattice, seed);  // a lattice the launch can carry, before any launch
    const StorageType* type = s.variant.precision_info().out;
    const std::size_t slot = round_up(elements * type->bytes, align);
    if (slot > env_.info().max_mem_alloc_size)
      throw std::runtime_error("an output of " + std::to_string(width) + "x" +
                               std::to_string(height) + " exceeds the device's largest buffer");
    auto arena = std::find_if(p.arenas.rbegin(), p.arenas.rend(), [&](const Plan::Arena& a) {
      return a.type == type && a.bytes + slot <= env_.info().max_mem_alloc_size;
    });
    if (arena == p.arenas.rend()) {
      p.arenas.push_back({type, 0, 0, 0});
      arena = p.arenas.rbegin();
    }
    r.arena = static_cast<std::size_t>(p.arenas.rend() - arena) - 1;
    r.offset = arena->bytes;
    arena->bytes += slot;
    p.rungs.push_back(std::move(r));
  }
  // Windows arena by arena, so that each reduction launch takes a contiguous run of them.
  std::size_t next = 0;
  for (std::size_t a = 0; a < p.arenas.size(); ++a) {
    p.arenas[a].first = next;
    for (Plan::Rung& r : p.rungs) {
      if (r.arena != a) continue;
      r.first = next;
      const std::size_t offset = r.offset / p.arenas[a].type->bytes;
      const WorkGroup b = r.block;
      for (std::size_t i = 0; i < r.sample.groups.size(); ++i) {
        const auto [gy, gx] = r.sample.groups[i];
        const BlockRect& w = r.sample.windows[i];
        const cl_int window[8] = {gy * b.y + w.y0,
                                  std::min(height, gy * b.y + w.y1),
                                  gx * b.x + w.x0,
                                  std::min(width, gx * b.x + w.x1),
                                  static_cast<cl_int>(r.first),
                                  static_cast<cl_int>(r.sample.groups.size()),
                                  static_cast<cl_int>(offset & 0xffffffffULL),
                                  static_cast<cl_int>(offset >> 32)};
        p.windows.insert(p.windows.end(), window, window + 8);
      }
      next += r.sample.groups.size();
    }
    p.arenas[a].windows = next - p.arenas[a].first;
  }
  return p;
}

void DeviceCanary::launch_app(const Grid& input, DeviceUploads& uploads, std::uint64_t seed,
                              const CanaryStage& stage, const CanarySample& sample,
                              const cl::Buffer& out, std::vector<cl::Event>& events) {
  const AppDescriptor& app = *stage.app;
  const Variant& v = stage.variant;
  const std::string file =
      (std::filesystem::path(kernel_root_) / "kernels" / app.kernel_file).string();
  const std::string neighbours = std::string("-DKPERF_SAMPLED_UP=") +
                                 (v.output.ky() > 1 ? "1" : "0") +
                                 " -DKPERF_SAMPLED_LEFT=" + (v.output.kx() > 1 ? "1" : "0");
  const std::string options =
      kernel_build_options(app, v, stage.wg, kernel_root_, params_,
                           extra_options_ + (extra_options_.empty() ? "" : " ") + neighbours);
  cl::Kernel& k = kernel(file, options, "kperf_app", kSampledGroups);
  const std::size_t items = static_cast<std::size_t>(stage.wg.x) * stage.wg.y;
  if (items > k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env_.device()))
    throw std::runtime_error(v.id() + ": a work-group of " + std::to_string(items) +
                             " work-items exceeds this kernel's CL_KERNEL_WORK_GROUP_SIZE");
  const DeviceUpload& up =
      device_upload(env_, uploads, v, app.radius, input, true, [this]() -> const std::string& {
        if (!half_image_problem_) half_image_problem_ = probe_half_images(env_, kernel_root_);
        return *half_image_problem_;
      });
  if (v.load_path().reads_image) {
    if (!up.image) throw std::runtime_error(v.id() + ": " + up.image_problem);
    k.setArg(0, *up.image);
  } else {
    k.setArg(0, up.buffer);
  }
  k.setArg(1, out);
  k.setArg(2, static_cast<cl_int>(input.width));
  k.setArg(3, static_cast<cl_int>(input.height));
  // The lattice's cells are the launch's groups; the offset carries the grid's groups and the
  // seed (groups_sampled.cl); along an output scheme's axes the groups before the sampled ones.
  const CanaryLattice& l = sample.lattice;
  const std::size_t z = (v.output.ky() > 1 ? 2 : 1) * (v.output.kx() > 1 ? 2 : 1);
  const std::array<std::size_t, 3> o = launch_offset(l, seed);
  const cl::NDRange offset(o[0], o[1], o[2]);
  const cl::NDRange global(static_cast<std::size_t>(l.cells_x) * stage.wg.x,
                           static_cast<std::size_t>(l.cells_y) * stage.wg.y, z);
  const cl::NDRange local(static_cast<std::size_t>(stage.wg.x),
                          static_cast<std::size_t>(stage.wg.y), 1);
  env_.queue().enqueueNDRangeKernel(k, offset, global, local, nullptr, &events.emplace_back());
}

void DeviceCanary::enqueue_apps(const Grid& input, DeviceUploads& uploads, std::uint64_t seed,
                                Plan& p, std::vector<cl::Event>& events) {
  const std::size_t bytes = static_cast<std::size_t>(input.width) * input.height * sizeof(float);
  cl::Buffer& truth = buffer("truth", bytes);
  for (std::size_t a = 0; a < p.arenas.size(); ++a) {
    cl::Buffer& arena = buffer("arena" + std::to_string(a), p.arenas[a].bytes);
    for (Plan::Rung& r : p.rungs)
      if (r.arena == a) {
        const cl_buffer_region region{r.offset, static_cast<std::size_t>(input.width) *
                                                    input.height * p.arenas[a].type->bytes};
        r.out = arena.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
      }
  }
  // The accurate kernel once per block: the truth is the same output wherever a launch computes
  // it, so the blocks of every tiling write one grid.
  static const Variant accurate = parse_scheme("accurate");
  const std::size_t max_items = std::min<std::size_t>(256, env_.info().max_work_group_size);
  std::set<std::pair<int, int>> blocks;
  for (const Plan::Rung& r : p.rungs) {
    if (!blocks.insert({r.block.x, r.block.y}).second) continue;
    const AppDescriptor& app = *r.stage->app;
    const WorkGroup shape = accurate_shape(app, r.stage->wg, r.block, max_items);
    if (shape.x == 0)
      throw std::runtime_error("no launch shape of the accurate kernel has the block " +
                               std::to_string(r.block.x) + "x" + std::to_string(r.block.y));
    launch_app(input, uploads, seed, {&app, accurate, shape}, r.sample, truth, events);
  }
  for (const Plan::Rung& r : p.rungs)
    launch_app(input, uploads, seed, *r.stage, r.sample, r.out, events);
}

void DeviceCanary::enqueue_reduction(int width, Plan& p, std::vector<cl::Event>& events) {
  auto& q = env_.queue();
  const std::size_t windows = p.windows.size() / 8;
  const std::string file = (std::filesystem::path(kernel_root_) / "kernels" / "canary.cl").string();
  auto options = [&](const StorageType& type) {
    return "-cl-std=CL1.2 -I " + (std::filesystem::path(kernel_root_) / "schemes").string() +
           " -DKPERF_PRECISION_FILE=" + type.cl_file +
           " -DWINDOW_X=" + std::to_string(CanarySample::kWindowX) +
           " -DWINDOW_Y=" + std::to_string(CanarySample::kWindowY);
  };
  // Every program first: a build that throws leaves no write of the plan's table in flight.
  cl::Kernel& max = kernel(file, options(storage_types().front()), "canary_window_max");
  std::vector<cl::Kernel*> sums_of;
  for (const Plan::Arena& a : p.arenas)
    sums_of.push_back(&kernel(file, options(*a.type), "canary_window_sums"));
  cl::Buffer& table = buffer("windows", p.windows.size() * sizeof(cl_int));
  q.enqueueWriteBuffer(table, CL_FALSE, 0, p.windows.size() * sizeof(cl_int), p.windows.data());
  cl::Buffer& wmax = buffer("wmax", windows * sizeof(cl_float));
  const cl::Buffer& truth = buffers_.at("truth").first;
  max.setArg(0, truth);
  max.setArg(1, table);
  max.setArg(2, static_cast<cl_int>(width));
  max.setArg(3, wmax);
  q.enqueueNDRangeKernel(max, cl::NullRange, cl::NDRange(windows * kWindow), cl::NDRange(kWindow),
                         nullptr, &events.emplace_back());
  cl::Buffer& sums = buffer("sums", windows * 8 * sizeof(cl_float));
  for (std::size_t a = 0; a < p.arenas.size(); ++a) {
    cl::Kernel& k = *sums_of[a];
    k.setArg(0, truth);
    k.setArg(1, buffers_.at("arena" + std::to_string(a)).first);
    k.setArg(2, table);
    k.setArg(3, wmax);
    k.setArg(4, static_cast<cl_int>(width));
    k.setArg(5, static_cast<cl_int>(p.arenas[a].first));
    k.setArg(6, sums);
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(p.arenas[a].windows * kWindow),
                           cl::NDRange(kWindow), nullptr, &events.emplace_back());
  }
}

DeviceCanaryRun DeviceCanary::estimate(const Grid& input, std::uint64_t seed,
                                       const std::vector<CanaryStage>& rungs) {
  DeviceUploads uploads;
  return estimate(input, uploads, seed, rungs);
}

DeviceCanaryRun DeviceCanary::estimate(const Grid& input, DeviceUploads& uploads,
                                       std::uint64_t seed, const std::vector<CanaryStage>& rungs) {
  const int w = input.width, h = input.height;
  if (static_cast<std::size_t>(w) * h * sizeof(float) > env_.info().max_mem_alloc_size)
    throw std::runtime_error("the input's accurate output exceeds the device's largest buffer");
  Plan p = plan(w, h, seed, rungs);
  DeviceCanaryRun run;
  if (p.rungs.empty()) return run;
  std::vector<cl::Event> events;
  enqueue_apps(input, uploads, seed, p, events);
  enqueue_reduction(w, p, events);
  const std::size_t windows = p.windows.size() / 8;
  std::vector<cl_float> sums(windows * 8);
  env_.queue().enqueueReadBuffer(buffers_.at("sums").first, CL_TRUE, 0,
                                 sums.size() * sizeof(cl_float), sums.data());
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (const cl::Event& e : events) {
    const std::uint64_t start = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const std::uint64_t end = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    first = std::min(first, start), last = std::max(last, end);
    run.busy_ns += static_cast<double>(end - start);
  }
  run.device_ns = static_cast<double>(last - first);
  run.launches = static_cast<int>(events.size());
  for (const Plan::Rung& r : p.rungs) {
    std::vector<ErrorSums> tiles;
    bool broken_truth = false;
    for (std::size_t i = 0; i < r.sample.groups.size(); ++i) {
      const cl_float* s = &sums[(r.first + i) * 8];
      ErrorSums t;
      t.rel = s[0], t.abs = s[1], t.min_t = s[2], t.max_t = s[3];
      t.n = std::llround(s[4]), t.n_rel = std::llround(s[5]), t.nonfinite = std::llround(s[6]);
      broken_truth = broken_truth || s[7] > 0;
      tiles.push_back(t);
    }
    CanaryEstimate e = estimate_from_tiles(r.stage->app->primary_metric, tiles, r.sample.population,
                                           settings_.confidence);
    e.fraction = static_cast<double>(e.elements) / (static_cast<double>(w) * h);
    // A truth that is not finite where the input is (SPEC 15's broken truth) estimates nothing.
    if (broken_truth) e.estimate = e.margin = std::numeric_limits<double>::quiet_NaN();
    run.estimates.push_back(e);
  }
  return run;
}

}  // namespace kperf
