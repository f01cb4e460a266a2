// The best operating points of a curve: one GPU's points (or the node's, summed per setting).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sweep/result.h"

namespace gpuclk::sweep {

// The SM clock a GPU ran at during a point, and whether something other than the point's lock
// (the power cap, a thermal limit) held it there.
struct RanClock {
  double mhz = 0;
  bool held_below = false;
};

// A point of the curve: its setting and what it achieved (the node's sum over its GPUs).
struct CurvePoint {
  double requested = 0;  // MHz or W
  double rate = 0;       // unit/s
  double power_w = 0;
  double energy_per_work = 0;  // J/unit
  // SM clock sweeps: each GPU's clock at this point, in GPU order; empty where any GPU's clock
  // was not read, and on other axes.
  std::vector<RanClock> ran;
  double edp() const { return energy_per_work / rate; }
};

struct BestPoint {
  std::string kind;  // "max_throughput", "min_energy", "min_edp", "min_energy_within_slowdown",
                     // "knee"
  CurvePoint point;
  double rate_vs_baseline = 0;    // rate / baseline's rate
  double energy_vs_baseline = 0;  // energy per work / baseline's
  // min_energy, min_edp, min_energy_within_slowdown: the setting whose value is strictly the
  // least, when the tie rule (kTieTolerance) named a lower one; nullopt when they are the same.
  std::optional<double> least_at;
};

// Values within this fraction of the least count as a tie (measurement noise): the lowest setting
// among them is the best point.
inline constexpr double kTieTolerance = 0.005;

// The curve of the measured points that succeeded, summed over GPUs per requested value
// (rate and power add, energy per work is total energy / total work), sorted by setting.
std::vector<CurvePoint> curve_of(const std::vector<PointResult>& points);
std::optional<CurvePoint> baseline_of(const std::vector<PointResult>& points);

// The best points of `curve` (sorted ascending):
//   max_throughput: highest rate (the lowest setting among rates within 0.5 % of it: the same
//     throughput for less);
//   min_energy: lowest energy per unit of work;  min_edp: lowest energy × delay per unit;
//   min_energy_within_slowdown: lowest energy per work among points whose rate is at least
//     (1 − max_slowdown) × the highest rate (each of these three: the lowest setting within
//     0.5 % of the least value, as points held at the same clock by the cap differ by noise);
//   knee: the highest setting below which throughput falls by a larger fraction than power does
//     (the first segment, from the top, where ln(r_hi/r_lo) > ln(P_hi/P_lo) and the
//     rate falls by more than 0.5 %).
// Settings that ran at one operating point are compared as one (operating_points): their
// mean rate, power and energy per work, named by the lowest of them, whose own measurement the
// best point shows.
// A kind with no qualifying point is left out. Ratios are against `baseline` (the settings
// before the sweep), or against the max-throughput point when there is none.
std::vector<BestPoint> best_points(const std::vector<CurvePoint>& curve,
                                   const std::optional<CurvePoint>& baseline, double max_slowdown);

// The curve's settings grouped by the operating point they ran at, ascending; each group is the
// range [first, last] of `curve`. A run of settings that the cap held below their lock on every
// GPU is one operating point, and so is the setting just below the run when on every GPU it was
// held too or ran at its lock at least as fast as the run's slowest clock.
// Their measured differences are the die's temperature and noise, not the setting: the idle
// moments between a sweep's points cool the GPU by different amounts, which moved a capped
// point's energy per work by more than kTieTolerance. `mean` holds the group's mean rate, power
// and energy per work under the lowest setting; a group of one is the point itself.
struct OperatingPoint {
  std::size_t first = 0, last = 0;
  CurvePoint mean;
};
std::vector<OperatingPoint> operating_points(const std::vector<CurvePoint>& curve);

// The best points of each GPU's own curve (its points only, ratios against its own baseline), by
// GPU index: a GPU that runs hotter or is capped lower than the others has its own best points,
// which the node's sum hides.
std::map<unsigned, std::vector<BestPoint>> best_points_per_gpu(
    const std::vector<PointResult>& points, double max_slowdown);

// Per kind, the GPUs grouped by the setting that kind's best point has on them (nullopt: the GPU
// has no such point), settings ascending, GPUs ascending within a group; only the kinds whose
// setting is not the same on every GPU.
struct BestSplit {
  std::string kind;
  std::vector<std::pair<std::optional<double>, std::vector<unsigned>>> groups;
};
std::vector<BestSplit> best_splits(const std::map<unsigned, std::vector<BestPoint>>& per_gpu);

}  // namespace gpuclk::sweep
