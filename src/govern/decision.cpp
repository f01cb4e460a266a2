#include "govern/decision.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuclk::govern {

std::string Decision::text() const {
  if (!locked) return "release";
  if (min == max) return fmt::format("{:.0f} MHz", max.value());
  return fmt::format("{:.0f}-{:.0f} MHz", min.value(), max.value());
}

control::ClockLock Decision::clock_lock() const {
  if (!locked) return control::ClockLock::none();
  return control::ClockLock::range(
      control::ClockBound::megahertz(static_cast<unsigned>(std::lround(min.value()))),
      control::ClockBound::megahertz(static_cast<unsigned>(std::lround(max.value()))));
}

}  // namespace gpuclk::govern
