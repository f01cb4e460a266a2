// How one class's throughput follows the SM clock, learned online: the elasticity
// e = d ln(throughput) / d ln(f) in bands of the clock, from pairs of observations of one
// class run (a contiguous stretch of that class) at two clocks. Only ratios of the throughput
// proxy matter, so any proxy proportional to the work done per second works (GPM activity ×
// clock, DRAM bandwidth). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>

#include "govern/signals.h"

namespace gpuclk::govern {

class ClockSensitivity {
 public:
  // prior: the elasticity assumed where nothing was observed; band: width of a learned band.
  explicit ClockSensitivity(double prior, Megahertz band = Megahertz(150));

  // One interval of run `run` at `clock` with throughput proxy `throughput` (> 0).
  void observe(std::uint64_t run, Megahertz clock, double throughput);

  // The elasticity used at clock f: learned in f's band; else the nearest learned band's
  // (never below the prior under the lowest learned band: knees steepen downwards); else prior.
  double elasticity_at(Megahertz f) const;
  // Predicted time(f) / time(f_max) − 1 for the same work (≥ 0 for f ≤ f_max).
  double slowdown(Megahertz f, Megahertz f_max) const;
  // Lowest clock this class ran at in an observation (0 when none).
  Megahertz lowest_observed() const { return lowest_; }
  std::uint64_t pairs() const { return pairs_; }

 private:
  struct Band {
    double sum = 0;
    double count = 0;
  };
  int band_of(double mhz) const;
  void learn(double f1, double t1, double f2, double t2);

  double prior_;
  double band_mhz_;
  std::map<int, Band> bands_;
  std::uint64_t pairs_ = 0;
  Megahertz lowest_;
  // The run's observations at its current clock, averaged, and at the previous clock.
  std::uint64_t run_ = ~std::uint64_t{0};
  double clock_ = 0, throughput_sum_ = 0, throughput_count_ = 0;
};

}  // namespace gpuclk::govern
