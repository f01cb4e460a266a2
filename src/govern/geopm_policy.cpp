#include "govern/geopm_policy.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuclk::govern {

Proposal GeopmPolicy::decide(const PolicyInput& in) {
  const auto& s = in.signals;
  if (!s.gpu_utilization || !s.sm_active) {
    return {Decision::release(), "no utilisation or SM activity reading"};
  }
  double f_max = in.ladder.max().value();
  double f_e = (efficient_.value() > 0 ? efficient_ : in.ladder.base()).value();
  f_e = std::clamp(f_e, in.ladder.min().value(), f_max);
  if (phi_ > 0.5) f_e += (f_max - f_e) * (phi_ - 0.5) / 0.5;
  if (phi_ < 0.5) f_max -= (f_max - f_e) * (0.5 - phi_) / 0.5;
  const double util = s.gpu_utilization->value();
  const double sm = s.sm_active->value();
  const double scalability = util > 0 ? std::clamp(sm / util, 0.0, 1.0) : 0.0;
  const Megahertz f = in.ladder.ceil(Megahertz(f_e + (f_max - f_e) * scalability));
  return {Decision::lock(f, f),
          fmt::format("SM active {:.0f} % / utilisation {:.0f} %: Fe {:.0f} + {:.2f} x (Fmax - Fe)",
                      sm * 100, util * 100, f_e, scalability)};
}

}  // namespace gpuclk::govern
