// The canary of one input (SPEC 15): sampled tiles, the models of a chain over them, and the
// estimate with its confidence margin.
#include "input_canary.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "kernel_axes.hpp"

namespace kperf {

std::optional<std::string> canary_problem(const CanaryStage& stage) {
  if (stage.app->traits.iterated || stage.app->traits.second_input)
    return stage.app->name +
           " iterates or reads a second input: a tile depends on more than "
           "its neighbourhood";
  if (races(stage.variant))
    return stage.variant.id() + " races: the model keeps the barrier it relaxes";
  if (stage.fused)
    return std::string(
        "a fused chain: the canary models each stage in its own launch over its own tile, and the "
        "fused kernel computes them over one tile with every stage's halo");
  return std::nullopt;
}

namespace {

constexpr double kPi = 3.14159265358979323846;

// splitmix64: a portable generator (std's distributions differ between libraries).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t canary_seed(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

CanaryLattice canary_lattice(int groups_x, int groups_y, int count) {
  if (static_cast<std::int64_t>(count) >= static_cast<std::int64_t>(groups_x) * groups_y)
    return {groups_x, groups_y, groups_x, groups_y};
  // Cells as near square (in groups) as the lattice allows, about `count` of them.
  const double aspect = static_cast<double>(groups_y) / groups_x;
  const int cells_y =
      std::clamp(static_cast<int>(std::lround(std::sqrt(count * aspect))), 1, groups_y);
  const int cells_x = std::clamp((count + cells_y - 1) / cells_y, 1, groups_x);
  return {groups_x, groups_y, cells_x, cells_y};
}

std::uint16_t canary_group_key(std::uint64_t seed) {
  return static_cast<std::uint16_t>(mix(seed) >> 48);
}

std::vector<std::pair<int, int>> canary_groups(int groups_x, int groups_y, int count,
                                               std::uint64_t seed) {
  std::vector<std::pair<int, int>> out;
  const CanaryLattice lattice = canary_lattice(groups_x, groups_y, count);
  const int cells_x = lattice.cells_x, cells_y = lattice.cells_y;
  const std::uint64_t key = canary_group_key(seed);
  // Cells of one group each (every group sampled) draw that group: row-major order.
  for (int cy = 0; cy < cells_y; ++cy)
    for (int cx = 0; cx < cells_x; ++cx) {
      const int y0 = static_cast<int>(static_cast<std::int64_t>(cy) * groups_y / cells_y);
      const int y1 = static_cast<int>(static_cast<std::int64_t>(cy + 1) * groups_y / cells_y);
      const int x0 = static_cast<int>(static_cast<std::int64_t>(cx) * groups_x / cells_x);
      const int x1 = static_cast<int>(static_cast<std::int64_t>(cx + 1) * groups_x / cells_x);
      const std::uint64_t r = mix(key ^ mix(static_cast<std::uint64_t>(cy) * cells_x + cx));
      out.emplace_back(
          y0 + static_cast<int>((r >> 32) % static_cast<std::uint64_t>(y1 - y0)),
          x0 + static_cast<int>((r & 0xffffffffULL) % static_cast<std::uint64_t>(x1 - x0)));
    }
  return out;
}

CanarySample canary_sample(int width, int height, WorkGroup block, const CanarySettings& s,
                           std::uint64_t seed) {
  CanarySample out;
  const int wx = std::min(block.x, CanarySample::kWindowX);
  const int wy = std::min(block.y, CanarySample::kWindowY);
  const int groups_x = (width + block.x - 1) / block.x, groups_y = (height + block.y - 1) / block.y;
  const std::int64_t groups = static_cast<std::int64_t>(groups_x) * groups_y;
  const double wanted = std::ceil(s.fraction * width * static_cast<double>(height) / (wx * wy));
  const std::int64_t count =
      std::min(groups, std::max<std::int64_t>(s.min_tiles, static_cast<std::int64_t>(wanted)));
  out.groups = canary_groups(groups_x, groups_y, static_cast<int>(count), seed);
  out.lattice = canary_lattice(groups_x, groups_y, static_cast<int>(count));
  // The block cut into slots of the window's size (the last ones clipped), one drawn at random:
  // every output is as likely to be compared as any other (a window placed anywhere would
  // seldom reach the block's edges, where perforation errs most).
  const int slots_x = (block.x + wx - 1) / wx, slots_y = (block.y + wy - 1) / wy;
  out.population = static_cast<double>(groups) * slots_x * slots_y;
  for (const auto& [gy, gx] : out.groups) {
    const std::uint64_t r = mix(seed ^ mix(GroupOutputs::key(gy, gx) ^ 0x5bd1e995ULL));
    const int y0 = wy * static_cast<int>((r >> 32) % static_cast<std::uint64_t>(slots_y));
    const int x0 = wx * static_cast<int>((r & 0xffffffffULL) % static_cast<std::uint64_t>(slots_x));
    out.windows.push_back({y0, std::min(block.y, y0 + wy), x0, std::min(block.x, x0 + wx)});
  }
  return out;
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p outside (0, 1)");
  // Acklam's rational approximation (relative error below 1.2e-9), one Newton step on erfc.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  };
  double x;
  if (p < 0.02425) {
    x = tail(std::sqrt(-2 * std::log(p)));
  } else if (p > 1 - 0.02425) {
    x = -tail(std::sqrt(-2 * std::log(1 - p)));
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  return x - e * std::sqrt(2 * kPi) * std::exp(x * x / 2);
}

double student_t_quantile(double p, double df) {
  if (!(df >= 1)) throw std::invalid_argument("student_t_quantile: df below 1");
  if (df == 1) return std::tan(kPi * (p - 0.5));
  if (df == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  // Cornish-Fisher expansion in 1/df (Abramowitz and Stegun 26.7.5): within 0.1 % from df 3.
  const double z = normal_quantile(p), z2 = z * z;
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

CanaryEstimate estimate_from_tiles(Metric metric, const std::vector<ErrorSums>& tiles,
                                   double population, double confidence) {
  CanaryEstimate e;
  e.tiles = static_cast<int>(tiles.size());
  e.population = population;
  if (tiles.empty()) {
    e.estimate = e.margin = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  const bool mre = metric == Metric::kMre;
  const double n = static_cast<double>(tiles.size());
  double sum_y = 0, sum_x = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const ErrorSums& t : tiles) {
    sum_y += mre ? t.rel : t.abs;
    sum_x += static_cast<double>(mre ? t.n_rel : t.n);
    e.elements += t.n + t.nonfinite;
    if (t.n > 0) lo = std::min(lo, t.min_t), hi = std::max(hi, t.max_t);
  }
  // As errors_from_sums: no element above the threshold is an MRE of 0, a constant truth an ME
  // of the mean absolute error.
  const double scale = mre || !(hi > lo) ? 1.0 : hi - lo;
  const double ratio = sum_x > 0 ? sum_y / sum_x : 0.0;
  e.estimate = ratio / scale;
  if (n >= population) {  // every window: the estimate is the error
    e.margin = 0;
    return e;
  }
  // No certainty without information: windows whose truths are all zero (or under MRE's
  // threshold) add nothing to the ratio and nothing to its spread, so a dark sample would bound a
  // rung's error at 0 whatever the unsampled rest holds. Fewer than two windows with an element
  // the metric counts, or for ME no range to normalise by, bound nothing.
  int informative = 0;
  for (const ErrorSums& t : tiles) informative += (mre ? t.n_rel : t.n) > 0;
  if (informative < 2 || (!mre && !(hi > lo))) {
    e.margin = std::numeric_limits<double>::infinity();
    return e;
  }
  double ss = 0;
  for (const ErrorSums& t : tiles) {
    const double d = (mre ? t.rel : t.abs) - ratio * static_cast<double>(mre ? t.n_rel : t.n);
    ss += d * d;
  }
  const double mean_x = sum_x / n;
  const double finite = 1 - n / population;
  const double se = std::sqrt(finite * ss / (n - 1) / n) / mean_x;
  e.margin = student_t_quantile(confidence, n - 1) * se / scale;
  return e;
}

InputCanary::InputCanary(const Grid& input, const CanarySettings& settings, std::uint64_t seed,
                         const AppParams& params, std::vector<GridEvaluator> evaluators)
    : input_(input),
      settings_(settings),
      seed_(seed),
      params_(params),
      evaluators_(std::move(evaluators)) {}

namespace {

// The groups of a launch of `block` whose blocks meet rows [y0, y1) and columns [x0, x1).
void groups_meeting(WorkGroup block, int y0, int y1, int x0, int x1,
                    std::set<std::pair<int, int>>& out) {
  for (int gy = y0 / block.y; gy <= (y1 - 1) / block.y; ++gy)
    for (int gx = x0 / block.x; gx <= (x1 - 1) / block.x; ++gx) out.emplace(gy, gx);
}

}  // namespace

GroupOutputs InputCanary::run_chain(const std::vector<CanaryStage>& chain,
                                    const CanarySample& sample, bool truth) {
  const int w = input_.width, h = input_.height;
  static const Variant accurate = parse_scheme("accurate");
  // Each stage as it runs: the truth is every app's accurate model on the same tiling.
  std::vector<CanaryStage> stages = chain;
  if (truth)
    for (CanaryStage& s : stages) {
      const WorkGroup block = block_of(s.variant, s.wg);
      s = {s.app, accurate, {block.x, block.y, 1, 1}};
    }
  // Backwards: the groups of each stage that the next one's outputs read: the last stage's
  // windows, an earlier stage's whole blocks, each with the app's radius around it, and a whole
  // block further along an output scheme's axis (its fill reads the neighbours' outputs).
  std::vector<std::vector<std::pair<int, int>>> needed(stages.size());
  needed.back() = sample.groups;
  for (std::size_t k = stages.size() - 1; k > 0; --k) {
    const CanaryStage& s = stages[k];
    const WorkGroup block = block_of(s.variant, s.wg),
                    prev = block_of(stages[k - 1].variant, stages[k - 1].wg);
    const bool fills = s.variant.output.ky() > 1 || s.variant.output.kx() > 1;
    const int ry = s.app->radius + (s.variant.output.ky() > 1 ? block.y : 0);
    const int rx = s.app->radius + (s.variant.output.kx() > 1 ? block.x : 0);
    std::set<std::pair<int, int>> reads;
    for (std::size_t i = 0; i < needed[k].size(); ++i) {
      const auto [gy, gx] = needed[k][i];
      const BlockRect r =
          k + 1 == stages.size() && !fills ? sample.windows[i] : BlockRect{0, block.y, 0, block.x};
      groups_meeting(prev, std::max(0, gy * block.y + r.y0 - ry),
                     std::min(h, gy * block.y + r.y1 + ry), std::max(0, gx * block.x + r.x0 - rx),
                     std::min(w, gx * block.x + r.x1 + rx), reads);
    }
    needed[k - 1].assign(reads.begin(), reads.end());
  }
  GroupOutputs current;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const CanaryStage& s = stages[k];
    const GridEvaluator evaluate = k < evaluators_.size() ? evaluators_[k] : GridEvaluator{};
    ModelInput in{w, h, k == 0 ? input_.data.data() : nullptr, {}};
    // A previous stage's outputs, its last block found kept per thread: the truth's chained
    // references hand on doubles, the device the stored value read as a float.
    static std::atomic<std::uint64_t> passes{0};
    if (k > 0)
      in.at = [&current, truth, pass = ++passes](int y, int x) {
        thread_local std::uint64_t owner = 0;  // the pass whose block is kept
        thread_local std::int64_t key = -1;
        thread_local const std::vector<double>* block = nullptr;
        const WorkGroup b = current.block;
        const std::int64_t here = GroupOutputs::key(y / b.y, x / b.x);
        if (owner != pass || key != here) {
          owner = pass, key = here;
          block = current.find(y / b.y, x / b.x);
        }
        const double value = block ? (*block)[static_cast<std::size_t>(y % b.y) * b.x + x % b.x]
                                   : std::numeric_limits<double>::quiet_NaN();
        return truth ? value : static_cast<double>(static_cast<float>(value));
      };
    const bool last = k + 1 == stages.size();
    GroupOutputs next = model_groups(*s.app, s.variant, s.wg, in, needed[k], params_, evaluate,
                                     last ? sample.windows : std::vector<BlockRect>{});
    current = std::move(next);
  }
  return current;
}

namespace {

// Each window's error sums (the approximate output as the device stores it, a float), and
// whether the truth is non-finite anywhere in them.
std::vector<ErrorSums> window_sums(const GroupOutputs& truth, const GroupOutputs& approx,
                                   const CanarySample& sample, int w, int h, bool& broken_truth) {
  const WorkGroup block = truth.block;
  auto each = [&](const auto& visit) {
    for (std::size_t i = 0; i < sample.groups.size(); ++i) {
      const auto [gy, gx] = sample.groups[i];
      const BlockRect& r = sample.windows[i];
      for (int y = gy * block.y + r.y0; y < std::min(h, gy * block.y + r.y1); ++y)
        for (int x = gx * block.x + r.x0; x < std::min(w, gx * block.x + r.x1); ++x) visit(y, x);
    }
  };
  // The MRE's near-zero threshold from the sample's largest |T| (the grid's is unknown).
  double max_abs_t = 0;
  each([&](int y, int x) {
    const double t = truth.at(y, x);
    if (std::isfinite(t)) max_abs_t = std::max(max_abs_t, std::fabs(t));
  });
  const double threshold = 1e-6 * max_abs_t;
  std::vector<ErrorSums> out;
  for (std::size_t i = 0; i < sample.groups.size(); ++i) {
    const auto [gy, gx] = sample.groups[i];
    const BlockRect& r = sample.windows[i];
    ErrorSums s;
    s.min_t = std::numeric_limits<double>::infinity();
    s.max_t = -s.min_t;
    for (int y = gy * block.y + r.y0; y < std::min(h, gy * block.y + r.y1); ++y)
      for (int x = gx * block.x + r.x0; x < std::min(w, gx * block.x + r.x1); ++x) {
        const double t = truth.at(y, x);
        const double a = static_cast<double>(static_cast<float>(approx.at(y, x)));
        broken_truth = broken_truth || !std::isfinite(t);
        if (!std::isfinite(t) || !std::isfinite(a)) {
          ++s.nonfinite;
          continue;
        }
        const double diff = std::fabs(t - a);
        ++s.n;
        s.abs += diff;
        s.min_t = std::min(s.min_t, t), s.max_t = std::max(s.max_t, t);
        if (std::fabs(t) > threshold) {
          s.rel += diff / std::fabs(t);
          ++s.n_rel;
        } else {
          ++s.excluded;
        }
      }
    out.push_back(s);
  }
  return out;
}

}  // namespace

CanaryEstimate InputCanary::estimate(const std::vector<CanaryStage>& chain) {
  if (chain.empty()) throw std::invalid_argument("a canary of no stage");
  for (const CanaryStage& s : chain)
    if (const auto problem = canary_problem(s)) throw std::invalid_argument(*problem);
  const int w = input_.width, h = input_.height;
  const CanarySample sample =
      canary_sample(w, h, block_of(chain.back().variant, chain.back().wg), settings_, seed_);
  // The truth's tiles and windows follow from the blocks alone: rungs of one tiling share them.
  std::string truth_key;
  for (const CanaryStage& s : chain) {
    const WorkGroup b = block_of(s.variant, s.wg);
    truth_key += s.app->name + "@" + std::to_string(b.x) + "x" + std::to_string(b.y) + ";";
  }
  auto found = truths_.find(truth_key);
  if (found == truths_.end())
    found = truths_.emplace(truth_key, run_chain(chain, sample, true)).first;
  const GroupOutputs approx = run_chain(chain, sample, false);
  bool broken_truth = false;
  const std::vector<ErrorSums> tiles =
      window_sums(found->second, approx, sample, w, h, broken_truth);
  CanaryEstimate e = estimate_from_tiles(chain.back().app->primary_metric, tiles, sample.population,
                                         settings_.confidence);
  e.fraction = static_cast<double>(e.elements) / (static_cast<double>(w) * h);
  // A truth that is not finite where the input is (SPEC 15's broken truth) estimates nothing.
  if (broken_truth) e.estimate = e.margin = std::numeric_limits<double>::quiet_NaN();
  return e;
}

}  // namespace kperf
