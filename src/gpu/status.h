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
  // Read with the settings (it changes as rarely).
  Reading<RetiredPages> retired_pages;
};

// Reads the snapshot (about 20 NVML calls). A GPU lost since it was opened (its reads answer
// GPU_IS_LOST) gets unavailable_code 15 and the name "(GPU is lost)", as one lost before.
StatusSnapshot take_status(const Device& device);

// The settings of a snapshot: application clocks, power limit, persistence mode. They change
// only when someone changes them, and on an H100 the two application-clock reads alone take
// ~1 ms each (every other status field a few µs): the service reads them less often.
// take_status_readings leaves them unread; read_status_settings fills them in `s`.
StatusSnapshot take_status_readings(const Device& device);
void read_status_settings(const Device& device, StatusSnapshot& s);
// NVML's words for the code of a failed read ("Unknown Error", "GPU is lost"): messages above
// src/gpu/ name an error without NVML's types.
std::string describe_read_error(int nvml_code);

// Copies the settings of `from` into `to` (the service's cached settings into a fresh look);
// none into a look at a GPU that is unavailable.
void copy_status_settings(const StatusSnapshot& from, StatusSnapshot& to);

}  // namespace gpuclk::gpu
