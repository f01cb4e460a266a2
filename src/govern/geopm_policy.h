// `geopm`: GEOPM's gpu_activity agent. Every interval it requests
//   f = Fe + (Fmax − Fe) × SM_ACTIVE / UTILIZATION      (Fe when utilisation is 0)
// and writes it as a min = max clock lock. phi biases it: phi < 0.5 lowers Fmax towards Fe
// (energy), phi > 0.5 raises Fe towards Fmax (performance); 0.5 leaves both. Fe is the
// efficient frequency (GEOPM finds it by a sweep; here the base clock unless given).
// It raises clocks in memory-bound phases, where SM activity is high but the clock buys little.
#pragma once

#include "govern/policy.h"

namespace gpuclk::govern {

class GeopmPolicy final : public Policy {
 public:
  GeopmPolicy(double phi, Megahertz efficient) : phi_(phi), efficient_(efficient) {}
  std::string_view name() const override { return "geopm"; }
  Proposal decide(const PolicyInput& input) override;

 private:
  double phi_;
  Megahertz efficient_;
};

}  // namespace gpuclk::govern
