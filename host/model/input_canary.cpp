// The canary of one input (SPEC 15): sampled tiles, the models of a chain over them, and the
// estimate with its confidence margin.
#include "input_canary.hpp"

#include <algorithm>
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
  return std::nullopt;
}

int canary_tile_count(std::int64_t population, const CanarySettings& s) {
  const double wanted = std::ceil(s.fraction * static_cast<double>(population));
  const std::int64_t n = std::max<std::int64_t>(s.min_tiles, static_cast<std::int64_t>(wanted));
  return static_cast<int>(std::min(population, n));
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

std::vector<std::pair<int, int>> canary_groups(int groups_x, int groups_y, int count,
                                               std::uint64_t seed) {
  std::vector<std::pair<int, int>> out;
  if (static_cast<std::int64_t>(count) >= static_cast<std::int64_t>(groups_x) * groups_y) {
    for (int gy = 0; gy < groups_y; ++gy)
      for (int gx = 0; gx < groups_x; ++gx) out.emplace_back(gy, gx);
    return out;
  }
  // Cells as near square (in groups) as the lattice allows, about `count` of them.
  const double aspect = static_cast<double>(groups_y) / groups_x;
  const int cells_y =
      std::clamp(static_cast<int>(std::lround(std::sqrt(count * aspect))), 1, groups_y);
  const int cells_x = std::clamp((count + cells_y - 1) / cells_y, 1, groups_x);
  for (int cy = 0; cy < cells_y; ++cy)
    for (int cx = 0; cx < cells_x; ++cx) {
      const int y0 = static_cast<int>(static_cast<std::int64_t>(cy) * groups_y / cells_y);
      const int y1 = static_cast<int>(static_cast<std::int64_t>(cy + 1) * groups_y / cells_y);
      const int x0 = static_cast<int>(static_cast<std::int64_t>(cx) * groups_x / cells_x);
      const int x1 = static_cast<int>(static_cast<std::int64_t>(cx + 1) * groups_x / cells_x);
      const std::uint64_t r = mix(seed ^ mix(static_cast<std::uint64_t>(cy) * cells_x + cx));
      out.emplace_back(
          y0 + static_cast<int>((r >> 32) % static_cast<std::uint64_t>(y1 - y0)),
          x0 + static_cast<int>((r & 0xffffffffULL) % static_cast<std::uint64_t>(x1 - x0)));
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
                                   std::int64_t population, double confidence) {
  CanaryEstimate e;
  e.tiles = static_cast<int>(tiles.size());
  e.population = population;
  if (tiles.empty()) {
    e.estimate = e.margin = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  const bool mre = metric == Metric::kMre;
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
  const double n = static_cast<double>(tiles.size());
  if (static_cast<std::int64_t>(tiles.size()) >= population || sum_x <= 0) {
    e.margin = 0;
    return e;
  }
  if (tiles.size() < 2) {
    e.margin = std::numeric_limits<double>::infinity();
    return e;
  }
  double ss = 0;
  for (const ErrorSums& t : tiles) {
    const double d = (mre ? t.rel : t.abs) - ratio * static_cast<double>(mre ? t.n_rel : t.n);
    ss += d * d;
  }
  const double mean_x = sum_x / n;
  const double finite = 1 - n / static_cast<double>(population);
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
                                    const std::vector<std::pair<int, int>>& groups, bool truth) {
  const int w = input_.width, h = input_.height;
  static const Variant accurate = parse_scheme("accurate");
  // Each stage as it runs: the truth is every app's accurate model on the same tiling.
  std::vector<CanaryStage> stages = chain;
  if (truth)
    for (CanaryStage& s : stages) {
      const WorkGroup block = block_of(s.variant, s.wg);
      s = {s.app, accurate, {block.x, block.y, 1, 1}};
    }
  // Backwards: the groups of each stage that the next one's computed groups read (their tiles,
  // one block further along an output scheme's axis, whose fill reads the neighbours).
  std::vector<std::vector<std::pair<int, int>>> needed(stages.size());
  needed.back() = groups;
  for (std::size_t k = stages.size() - 1; k > 0; --k) {
    const CanaryStage& s = stages[k];
    const WorkGroup block = block_of(s.variant, s.wg),
                    prev = block_of(stages[k - 1].variant, stages[k - 1].wg);
    const int ry = s.app->radius + (s.variant.output.ky() > 1 ? block.y : 0);
    const int rx = s.app->radius + (s.variant.output.kx() > 1 ? block.x : 0);
    std::set<std::pair<int, int>> reads;
    for (const auto& [gy, gx] : needed[k])
      groups_meeting(prev, std::max(0, gy * block.y - ry), std::min(h, (gy + 1) * block.y + ry),
                     std::max(0, gx * block.x - rx), std::min(w, (gx + 1) * block.x + rx), reads);
    needed[k - 1].assign(reads.begin(), reads.end());
  }
  GroupOutputs current;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const CanaryStage& s = stages[k];
    const GridEvaluator evaluate = k < evaluators_.size() ? evaluators_[k] : GridEvaluator{};
    ElementAt read;
    if (k == 0)
      read = [this](int y, int x) { return static_cast<double>(input_.at(y, x)); };
    else if (truth)  // the chained references hand on doubles
      read = [&current](int y, int x) { return current.at(y, x); };
    else  // the device hands on the stored value, read as a float
      read = [&current](int y, int x) {
        return static_cast<double>(static_cast<float>(current.at(y, x)));
      };
    current = model_groups(*s.app, s.variant, s.wg, w, h, read, needed[k], params_, evaluate);
  }
  return current;
}

CanaryEstimate InputCanary::estimate(const std::vector<CanaryStage>& chain) {
  if (chain.empty()) throw std::invalid_argument("a canary of no stage");
  for (const CanaryStage& s : chain)
    if (const auto problem = canary_problem(s)) throw std::invalid_argument(*problem);
  const int w = input_.width, h = input_.height;
  const WorkGroup block = block_of(chain.back().variant, chain.back().wg);
  const int groups_x = (w + block.x - 1) / block.x, groups_y = (h + block.y - 1) / block.y;
  const std::int64_t population = static_cast<std::int64_t>(groups_x) * groups_y;
  const std::vector<std::pair<int, int>> groups =
      canary_groups(groups_x, groups_y, canary_tile_count(population, settings_), seed_);
  std::string truth_key;
  for (const CanaryStage& s : chain) {
    const WorkGroup b = block_of(s.variant, s.wg);
    truth_key += s.app->name + "@" + std::to_string(b.x) + "x" + std::to_string(b.y) + ";";
  }
  auto found = truths_.find(truth_key);
  if (found == truths_.end())
    found = truths_.emplace(truth_key, run_chain(chain, groups, true)).first;
  const GroupOutputs& truth = found->second;
  const GroupOutputs approx = run_chain(chain, groups, false);
  // The MRE's near-zero threshold from the sample's largest |T| (the grid's is unknown).
  double max_abs_t = 0;
  for (const auto& [key, values] : truth.blocks)
    for (double t : values)
      if (std::isfinite(t)) max_abs_t = std::max(max_abs_t, std::fabs(t));
  const double threshold = 1e-6 * max_abs_t;
  std::vector<ErrorSums> tiles;
  bool broken_truth = false;
  for (const auto& [gy, gx] : groups) {
    ErrorSums s;
    s.min_t = std::numeric_limits<double>::infinity();
    s.max_t = -s.min_t;
    for (int y = gy * block.y; y < std::min(h, (gy + 1) * block.y); ++y)
      for (int x = gx * block.x; x < std::min(w, (gx + 1) * block.x); ++x) {
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
    tiles.push_back(s);
  }
  CanaryEstimate e = estimate_from_tiles(chain.back().app->primary_metric, tiles, population,
                                         settings_.confidence);
  e.fraction = static_cast<double>(e.elements) / (static_cast<double>(w) * h);
  // A truth that is not finite where the input is (SPEC 15's broken truth) estimates nothing.
  if (broken_truth) e.estimate = e.margin = std::numeric_limits<double>::quiet_NaN();
  return e;
}

}  // namespace kperf
