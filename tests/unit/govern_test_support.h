// Signals and ladders for the governor's unit tests: an H100-like GPU (345–1980 MHz in 15 MHz,
// base 1590) and intervals of each kind, as the simulator's GPM would report them.
#pragma once

#include "govern/signals.h"

namespace gpuclk::govern::testing {

inline ClockLadder h100_ladder() {
  return ClockLadder::uniform(Megahertz(345), Megahertz(1980), Megahertz(15), Megahertz(1590));
}

inline Signals busy(double sm_clock, double sm, double tensor, double dram, double util = 1) {
  Signals s;
  s.sm_clock = Megahertz(sm_clock);
  s.memory_clock = Megahertz(2619);
  s.power = Watts(400);
  s.gpu_utilization = Ratio(util);
  s.reasons = gpu::ClockReasons(0);
  s.sm_active = Ratio(sm);
  s.tensor_active = Ratio(tensor);
  s.dram_active = Ratio(dram);
  s.fp32_active = Ratio(0);
  s.fp64_active = Ratio(0);
  s.fp16_active = Ratio(0);
  return s;
}

inline Signals memory_bound(double sm_clock, double dram = 0.895) {
  return busy(sm_clock, 0.99, 0, dram);
}
inline Signals compute_bound(double sm_clock) { return busy(sm_clock, 0.96, 0.89, 0.24); }
inline Signals idle(double sm_clock, double util = 0) { return busy(sm_clock, 0, 0, 0, util); }
inline Signals power_capped(double sm_clock) {
  auto s = compute_bound(sm_clock);
  s.reasons = gpu::ClockReasons(gpu::ClockReasons::sw_power_cap);
  return s;
}

}  // namespace gpuclk::govern::testing
