// Compact description of a supported-clock list: "345–1980 MHz, step 15, 110 values".
#pragma once

#include <string>
#include <vector>

#include "gpu/units.h"

namespace gpuclk::gpu {

struct ClockListSummary {
  units::Megahertz min, max;
  units::Megahertz step;  // 0 when the spacing is not uniform
  std::size_t count = 0;
};

ClockListSummary summarize_clocks(const std::vector<units::Megahertz>& clocks);
// "345–1980 MHz, step 15, 110 values"; an irregular list is written out ("1593, 2619 MHz").
std::string describe_clocks(const std::vector<units::Megahertz>& clocks);
// The supported clock nearest to `target` (ties go to the lower one); `clocks` non-empty.
units::Megahertz nearest_clock(const std::vector<units::Megahertz>& clocks,
                               units::Megahertz target);

}  // namespace gpuclk::gpu
