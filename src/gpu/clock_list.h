// Compact description of a supported-clock list: "345–1980 MHz, step 15, 110 values"; a V100's
// 7.5 MHz grid, listed in whole MHz, "135–1530 MHz in 7–8 MHz steps (7.5 on average), 187 values".
#pragma once

#include <string>
#include <vector>

#include "gpu/units.h"

namespace gpuclk::gpu {

struct ClockListSummary {
  units::Megahertz min, max;
  // The spacing: exact, or the mean of a grid in fractional steps that NVML lists rounded to
  // whole MHz (the V100's 7.5: gaps of 7 and 8); 0 when the spacing is not uniform.
  units::Megahertz step;
  bool step_rounded = false;  // the gaps are step rounded down or up (7 or 8), not step itself
  std::size_t count = 0;
};

ClockListSummary summarize_clocks(const std::vector<units::Megahertz>& clocks);
// "345–1980 MHz, step 15, 110 values"; "135–1530 MHz in 7–8 MHz steps (7.5 on average), 187
// values"; an irregular list as its runs of equal steps ("210–600 step 15, 1593, 2619 MHz"),
// a short one written out ("1593, 2619 MHz").
std::string describe_clocks(const std::vector<units::Megahertz>& clocks);
// The supported clock nearest to `target` (ties go to the lower one); `clocks` non-empty.
units::Megahertz nearest_clock(const std::vector<units::Megahertz>& clocks,
                               units::Megahertz target);

}  // namespace gpuclk::gpu
