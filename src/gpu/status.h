// One look at a GPU (what `gpuclk` shows per row). What is wrong with it is the rules engine's
// business (src/rules/status_input.h turns snapshots into its input).
#pragma once

#include <string>
#include <vector>

#include "gpu/device.h"

namespace gpuclk::gpu {

struct StatusSnapshot {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  int unavailable_code = 0;  // see Identity::unavailable_code
  Reading<int> pstate;
  Reading<Megahertz> sm_clock, sm_max, memory_clock, memory_max;
  Reading<Megahertz> app_sm_clock, app_memory_clock, default_app_sm_clock, default_app_memory_clock;
  Reading<Watts> power_draw, power_limit, default_power_limit;
  Reading<Celsius> temperature, slowdown_temperature;
  Reading<Utilization> utilization;
  Reading<ClockReasons> clock_reasons;
  Reading<bool> persistence_mode;
  Reading<PcieLink> pcie_link, pcie_max;
};

// Reads the snapshot (about 20 NVML calls, all fast ones).
StatusSnapshot take_status(const Device& device);

}  // namespace gpuclk::gpu
