#include "govern/threshold_policy.h"

#include <fmt/format.h>

namespace gpuclk::govern {

Proposal ThresholdPolicy::decide(const PolicyInput& in) {
  if (!in.signals.gpu_utilization) return {Decision::release(), "no utilisation reading"};
  const double util = in.signals.gpu_utilization->value();
  if (util > kHigh) {
    return {Decision::release(), fmt::format("utilisation {:.0f} % > 90 %", util * 100)};
  }
  if (util < kLow) {
    const Megahertz f = in.ladder.floor(in.ladder.base() * kBaseFraction);
    return {Decision::lock(f, f), fmt::format("utilisation {:.0f} % < 30 %: 0.8 x base {:.0f} MHz",
                                              util * 100, in.ladder.base().value())};
  }
  return {in.current, fmt::format("utilisation {:.0f} % between 30 and 90 %: keep", util * 100)};
}

}  // namespace gpuclk::govern
