// What one point of a sweep measured on one GPU, and the work unit a workload counts in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/repeat.h"

namespace gpuclk::sweep {

// How a workload counts work: "TFLOP" (rates in TFLOP/s), "GB" (GB/s), "run" (run/s: a command
// timed from start to exit), or a command's own unit picked out by --metric.
struct WorkUnit {
  std::string name = "run";
  std::string rate_unit() const { return name + "/s"; }
};

struct ReasonShare {
  std::string name;  // "sw_power_cap"
  double fraction = 0;
};

struct PointResult {
  unsigned gpu = 0;
  std::string uuid;
  bool baseline = false;  // measured at the settings found before the sweep, nothing written
  double requested = 0;   // MHz or W (not meaningful for the baseline)
  // Measured over the window (nullopt: not readable on this GPU).
  double seconds = 0;          // length of the measured window
  double work = 0;             // in the unit's amount
  std::optional<double> rate;  // the point's rate: work / seconds, or over its runs (below)
  // --repeat N: the runs of a command (or measured windows of a workload) the point took, and
  // each one's own rate; the point's rate is then their median (windows), the mean of the rates
  // a command printed (--metric), or runs / seconds (a timed command).
  unsigned runs = 1;
  std::vector<double> run_rates;
  std::optional<double> median_sm_mhz, power_w, power_p95_w, energy_j, temperature_c;
  std::optional<double> energy_per_work;               // J per unit
  std::optional<double> gpm_sm, gpm_tensor, gpm_dram;  // fractions 0..1
  std::vector<ReasonShare> reasons;
  // A clock lock is a ceiling: the power cap or a thermal limit may hold the clock lower.
  bool held_below = false;
  std::string error;  // the command failed at this point (empty: it did not)

  bool ok() const { return error.empty() && rate && *rate > 0; }
  // (max − min) / rate of the runs' own rates; nullopt with one run.
  std::optional<double> rate_spread() const {
    return rate ? relative_spread(run_rates, *rate) : std::nullopt;
  }
  // Energy-delay product per unit of work: (J / unit) × (s / unit).
  std::optional<double> edp() const {
    if (!ok() || !energy_per_work) return std::nullopt;
    return *energy_per_work / *rate;
  }
};

}  // namespace gpuclk::sweep
