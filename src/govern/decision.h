// A governor's clock decision for one GPU: release the SM clocks to the driver, or lock them to
// [min, max] (a cap is a lock from the lowest supported clock; GEOPM locks min = max).
#pragma once

#include <string>

#include "control/settings.h"
#include "govern/signals.h"

namespace gpuclk::govern {

struct Decision {
  bool locked = false;
  Megahertz min, max;  // when locked

  static Decision release() { return {}; }
  static Decision lock(Megahertz lo, Megahertz hi) { return {true, lo, hi}; }
  bool operator==(const Decision&) const = default;

  // The highest clock the decision allows (`ceiling` when released).
  Megahertz ceiling_or(Megahertz ceiling) const { return locked ? max : ceiling; }
  // "release" or "1410 MHz" or "345–1410 MHz".
  std::string text() const;
  // The clock lock that src/control writes for it.
  control::ClockLock clock_lock() const;
};

}  // namespace gpuclk::govern
