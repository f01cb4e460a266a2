// `threshold`: the load rule of the project's seed documents, as written: GPU utilisation
// above 90 % → maximum boost (clocks released), below 30 % → 0.8 × base clock, in between →
// keep the last decision. It looks at utilisation only.
#pragma once

#include "govern/policy.h"

namespace gpuclk::govern {

class ThresholdPolicy final : public Policy {
 public:
  static constexpr double kHigh = 0.90;
  static constexpr double kLow = 0.30;
  static constexpr double kBaseFraction = 0.8;

  std::string_view name() const override { return "threshold"; }
  Proposal decide(const PolicyInput& input) override;
};

}  // namespace gpuclk::govern
