// The best operating points of a curve: one GPU's points (or the node's, summed per setting).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/result.h"

namespace gpuclk::sweep {

// A point of the curve: its setting and what it achieved (the node's sum over its GPUs).
struct CurvePoint {
  double requested = 0;  // MHz or W
  double rate = 0;       // unit/s
  double power_w = 0;
  double energy_per_work = 0;  // J/unit
  double edp() const { return energy_per_work / rate; }
};

struct BestPoint {
  std::string kind;  // "max_throughput", "min_energy", "min_edp", "min_energy_within_slowdown",
                     // "knee"
  CurvePoint point;
  double rate_vs_baseline = 0;    // rate / baseline's rate
  double energy_vs_baseline = 0;  // energy per work / baseline's
};

// The curve of the measured points that succeeded, summed over GPUs per requested value
// (rate and power add, energy per work is total energy / total work), sorted by setting.
std::vector<CurvePoint> curve_of(const std::vector<PointResult>& points);
std::optional<CurvePoint> baseline_of(const std::vector<PointResult>& points);

// The best points of `curve` (sorted ascending):
//   max_throughput: highest rate (the lowest setting among rates within 0.5 % of it: the same
//     throughput for less);
//   min_energy: lowest energy per unit of work;  min_edp: lowest energy × delay per unit;
//   min_energy_within_slowdown: lowest energy per work among points whose rate is at least
//     (1 − max_slowdown) × the highest rate;
//   knee: the highest setting below which throughput falls by a larger fraction than power does
//     (the first segment, from the top, where ln(r_hi/r_lo) > ln(P_hi/P_lo) and the
//     rate falls by more than 0.5 %).
// A kind with no qualifying point is left out. Ratios are against `baseline` (the settings
// before the sweep), or against the max-throughput point when there is none.
std::vector<BestPoint> best_points(const std::vector<CurvePoint>& curve,
                                   const std::optional<CurvePoint>& baseline, double max_slowdown);

}  // namespace gpuclk::sweep
