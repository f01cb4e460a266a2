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
};

std::optional<CurvePoint> finish(const Sums& s, double requested) {
  if (!s.complete || s.work <= 0 || s.energy <= 0) return std::nullopt;
  return CurvePoint{requested, s.rate, s.power, s.energy / s.work};
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

std::vector<BestPoint> best_points(const std::vector<CurvePoint>& curve,
                                   const std::optional<CurvePoint>& baseline, double max_slowdown) {
  std::vector<BestPoint> out;
  if (curve.empty()) return out;
  double top = 0;
  for (const auto& c : curve) top = std::max(top, c.rate);
  const auto fastest = std::find_if(curve.begin(), curve.end(), [&](const CurvePoint& c) {
    return c.rate >= top * (1 - kSameRate);
  });
  const CurvePoint reference = baseline.value_or(*fastest);
  const CurvePoint* strict_least = nullptr;  // the last lowest()'s least value, before the tie rule
  const auto best = [&](std::string kind, const CurvePoint& c) {
    out.push_back({std::move(kind), c, c.rate / reference.rate,
                   c.energy_per_work / reference.energy_per_work});
  };
  // As best(), saying where the least value itself was when the tie rule named a lower setting.
  const auto best_of_least = [&](std::string kind, const CurvePoint& c) {
    best(std::move(kind), c);
    if (strict_least && strict_least->requested != c.requested)
      out.back().least_at = strict_least->requested;
  };
  // The lowest setting whose key is within kSameRate of the least: points the power cap holds
  // at the same clock measure the same within noise, and the lowest lock asks for least.
  const auto lowest = [&](auto key, auto qualifies) -> const CurvePoint* {
    const CurvePoint* least = nullptr;
    for (const auto& c : curve) {
      if (qualifies(c) && (!least || key(c) < key(*least))) least = &c;
    }
    strict_least = least;
    if (!least) return nullptr;
    for (const auto& c : curve) {  // ascending: the first that qualifies is the lowest setting
      if (qualifies(c) && key(c) <= key(*least) * (1 + kSameRate)) return &c;
    }
    return least;
  };
  const auto all = [](const CurvePoint&) { return true; };

  best("max_throughput", *fastest);
  if (auto* c = lowest([](const CurvePoint& p) { return p.energy_per_work; }, all)) {
    best_of_least("min_energy", *c);
  }
  if (auto* c = lowest([](const CurvePoint& p) { return p.edp(); }, all)) {
    best_of_least("min_edp", *c);
  }
  if (auto* c = lowest([](const CurvePoint& p) { return p.energy_per_work; },
                       [&](const CurvePoint& p) { return p.rate >= top * (1 - max_slowdown); })) {
    best_of_least("min_energy_within_slowdown", *c);
  }
  for (std::size_t k = curve.size() - 1; k > 0; --k) {
    const CurvePoint& hi = curve[k];
    const CurvePoint& lo = curve[k - 1];
    if (lo.rate <= 0 || lo.power_w <= 0) continue;
    const double rate_drop = std::log(hi.rate / lo.rate);
    if (rate_drop > kSameRate && rate_drop > std::log(hi.power_w / lo.power_w)) {
      best("knee", hi);
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
