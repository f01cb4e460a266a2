#include "sweep/best.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuclk::sweep {
namespace {

// Rates (energies, EDPs) within this fraction of the best count as the same: measurement noise.
constexpr double kSameRate = kTieTolerance;

struct Sums {
  double rate = 0, power = 0, energy = 0, work = 0;
  bool complete = true;
  std::map<unsigned, RanClock> ran;  // by GPU index
  bool every_clock_read = true;
};

std::optional<CurvePoint> finish(const Sums& s, double requested) {
  if (!s.complete || s.work <= 0 || s.energy <= 0) return std::nullopt;
  CurvePoint c{requested, s.rate, s.power, s.energy / s.work, {}};
  if (s.every_clock_read) {
    for (const auto& [gpu, clock] : s.ran) c.ran.push_back(clock);
  }
  return c;
}

void add(Sums& s, const PointResult& p) {
  if (!p.ok() || !p.energy_j || !p.power_w) {
    s.complete = false;
    return;
  }
  s.rate += *p.rate;
  s.power += *p.power_w;
  s.energy += *p.power_w * p.seconds;  // consistent with PointResult::energy_per_work
  s.work += *p.rate * p.seconds;
  if (p.median_sm_mhz) {
    s.ran[p.gpu] = RanClock{*p.median_sm_mhz, p.held_below};
  } else {
    s.every_clock_read = false;
  }
}

bool held_on_every_gpu(const CurvePoint& c) {
  return !c.ran.empty() &&
         std::all_of(c.ran.begin(), c.ran.end(), [](const RanClock& r) { return r.held_below; });
}

// Whether `below` (the setting just below a held run) ran at the run's operating point: on
// every GPU held as well, or at its lock at least as fast as the run's slowest clock. (Not a
// clock step below it: a capped GPU's hot points ran a step under the cap, and the lock below
// them, slower than the cap at any temperature, joined the run and became its name.)
bool joins_run(const CurvePoint& below, const std::vector<CurvePoint>& curve, std::size_t first,
               std::size_t last) {
  if (below.ran.size() != curve[first].ran.size()) return false;
  for (std::size_t g = 0; g < below.ran.size(); ++g) {
    if (below.ran[g].held_below) continue;
    double slowest = curve[first].ran[g].mhz;
    for (std::size_t k = first; k <= last; ++k) slowest = std::min(slowest, curve[k].ran[g].mhz);
    if (below.ran[g].mhz < slowest - 0.5) return false;  // MHz medians are whole numbers
  }
  return true;
}

OperatingPoint mean_of(const std::vector<CurvePoint>& curve, std::size_t first, std::size_t last) {
  OperatingPoint op{first, last, curve[first]};
  if (first == last) return op;
  double rate = 0, power = 0, energy_per_work = 0;
  for (std::size_t k = first; k <= last; ++k) {
    rate += curve[k].rate;
    power += curve[k].power_w;
    energy_per_work += curve[k].energy_per_work;
  }
  const auto n = static_cast<double>(last - first + 1);
  op.mean.rate = rate / n;
  op.mean.power_w = power / n;
  op.mean.energy_per_work = energy_per_work / n;
  return op;
}

}  // namespace

std::vector<CurvePoint> curve_of(const std::vector<PointResult>& points) {
  std::map<double, Sums> by_setting;
  for (const auto& p : points) {
    if (!p.baseline) add(by_setting[p.requested], p);
  }
  std::vector<CurvePoint> out;
  for (const auto& [requested, sums] : by_setting) {
    if (auto c = finish(sums, requested)) out.push_back(*c);
  }
  return out;
}

std::optional<CurvePoint> baseline_of(const std::vector<PointResult>& points) {
  Sums sums;
  bool any = false;
  for (const auto& p : points) {
    if (p.baseline) add(sums, p), any = true;
  }
  return any ? finish(sums, 0) : std::nullopt;
}

std::vector<OperatingPoint> operating_points(const std::vector<CurvePoint>& curve) {
  std::vector<OperatingPoint> out;
  // From the top down: a held run, then the setting below it if it joins; then the rest alone.
  std::size_t end = curve.size();  // the groups found so far start at `end`
  while (end > 0) {
    std::size_t last = end - 1;
    std::size_t first = last;
    if (held_on_every_gpu(curve[last])) {
      while (first > 0 && held_on_every_gpu(curve[first - 1]) &&
             curve[first - 1].ran.size() == curve[last].ran.size()) {
        --first;
      }
      if (first > 0 && joins_run(curve[first - 1], curve, first, last)) --first;
    }
    out.push_back(mean_of(curve, first, last));
    end = first;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<BestPoint> best_points(const std::vector<CurvePoint>& curve,
                                   const std::optional<CurvePoint>& baseline, double max_slowdown) {
  std::vector<BestPoint> out;
  if (curve.empty()) return out;
  const std::vector<OperatingPoint> ops = operating_points(curve);
  double top = 0;
  for (const auto& op : ops) top = std::max(top, op.mean.rate);
  const auto fastest = std::find_if(ops.begin(), ops.end(), [&](const OperatingPoint& op) {
    return op.mean.rate >= top * (1 - kSameRate);
  });
  const CurvePoint reference = baseline.value_or(curve[fastest->first]);
  const OperatingPoint* strict_least = nullptr;  // the last lowest()'s least, before the tie rule
  // A best point shows its setting's own measurement: what the table and the plots show there.
  const auto best = [&](std::string kind, const OperatingPoint& op) {
    const CurvePoint& c = curve[op.first];
    out.push_back({std::move(kind), c, c.rate / reference.rate,
                   c.energy_per_work / reference.energy_per_work});
  };
  // As best(), saying where the least value itself was when the tie rule named a lower setting.
  const auto best_of_least = [&](std::string kind, const OperatingPoint& op) {
    best(std::move(kind), op);
    if (strict_least && strict_least->first != op.first)
      out.back().least_at = curve[strict_least->first].requested;
  };
  // The lowest setting whose key is within kSameRate of the least: points the power cap holds
  // at the same clock measure the same within noise, and the lowest lock asks for least.
  const auto lowest = [&](auto key, auto qualifies) -> const OperatingPoint* {
    const OperatingPoint* least = nullptr;
    for (const auto& op : ops) {
      if (qualifies(op.mean) && (!least || key(op.mean) < key(least->mean))) least = &op;
    }
    strict_least = least;
    if (!least) return nullptr;
    for (const auto& op : ops) {  // ascending: the first that qualifies is the lowest setting
      if (qualifies(op.mean) && key(op.mean) <= key(least->mean) * (1 + kSameRate)) return &op;
    }
    return least;
  };
  const auto all = [](const CurvePoint&) { return true; };

  best("max_throughput", *fastest);
  if (auto* op = lowest([](const CurvePoint& p) { return p.energy_per_work; }, all)) {
    best_of_least("min_energy", *op);
  }
  if (auto* op = lowest([](const CurvePoint& p) { return p.edp(); }, all)) {
    best_of_least("min_edp", *op);
  }
  if (auto* op = lowest([](const CurvePoint& p) { return p.energy_per_work; },
                        [&](const CurvePoint& p) { return p.rate >= top * (1 - max_slowdown); })) {
    best_of_least("min_energy_within_slowdown", *op);
  }
  for (std::size_t k = ops.size() - 1; k > 0; --k) {
    const CurvePoint& hi = ops[k].mean;
    const CurvePoint& lo = ops[k - 1].mean;
    if (lo.rate <= 0 || lo.power_w <= 0) continue;
    const double rate_drop = std::log(hi.rate / lo.rate);
    if (rate_drop > kSameRate && rate_drop > std::log(hi.power_w / lo.power_w)) {
      best("knee", ops[k]);
      break;
    }
  }
  return out;
}

std::map<unsigned, std::vector<BestPoint>> best_points_per_gpu(
    const std::vector<PointResult>& points, double max_slowdown) {
  std::map<unsigned, std::vector<PointResult>> by_gpu;
  for (const auto& p : points) by_gpu[p.gpu].push_back(p);
  std::map<unsigned, std::vector<BestPoint>> out;
  for (const auto& [gpu, own] : by_gpu) {
    out[gpu] = best_points(curve_of(own), baseline_of(own), max_slowdown);
  }
  return out;
}

std::vector<BestSplit> best_splits(const std::map<unsigned, std::vector<BestPoint>>& per_gpu) {
  // The kinds in the order best_points lists them, as any GPU has them.
  std::vector<std::string> kinds;
  for (const auto& [gpu, best] : per_gpu) {
    for (const auto& b : best) {
      if (std::find(kinds.begin(), kinds.end(), b.kind) == kinds.end()) kinds.push_back(b.kind);
    }
  }
  std::vector<BestSplit> out;
  for (const auto& kind : kinds) {
    std::map<std::optional<double>, std::vector<unsigned>> groups;  // nullopt sorts first
    for (const auto& [gpu, best] : per_gpu) {
      const auto it = std::find_if(best.begin(), best.end(),
                                   [&](const BestPoint& b) { return b.kind == kind; });
      groups[it == best.end() ? std::nullopt : std::optional(it->point.requested)].push_back(gpu);
    }
    if (groups.size() < 2) continue;
    BestSplit split{kind, {}};
    for (auto& [setting, gpus] : groups) split.groups.emplace_back(setting, std::move(gpus));
    out.push_back(std::move(split));
  }
  return out;
}

}  // namespace gpuclk::sweep
