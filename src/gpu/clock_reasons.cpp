#include "gpu/clock_reasons.h"

namespace gpuclk::gpu {

const std::vector<ClockReasonInfo>& clock_reasons() {
  // Meanings after NVIDIA's NVML reference and nvidia-smi -q's "Clocks Event Reasons" section.
  static const std::vector<ClockReasonInfo> reasons = {
      {ClockReasons::gpu_idle, "gpu_idle", "idle", "nothing is running; clocks drop to save power"},
      {ClockReasons::applications_clocks_setting, "applications_clocks_setting", "appclk",
       "the application clock setting (nvidia-smi -ac, gpuclk set --app-clocks) caps the clock"},
      {ClockReasons::sw_power_cap, "sw_power_cap", "pwrcap",
       "the power limit: the driver lowers the clock to keep power under it"},
      {ClockReasons::hw_slowdown, "hw_slowdown", "hwslow",
       "hardware slowdown (factor 2 or more): too hot, power brake, or power supply"},
      {ClockReasons::sync_boost, "sync_boost", "sync",
       "sync boost: held to the clock of the slowest GPU in its sync-boost group"},
      {ClockReasons::sw_thermal_slowdown, "sw_thermal_slowdown", "swthrm",
       "the driver lowers the clock because the GPU or memory is near its maximum temperature"},
      {ClockReasons::hw_thermal_slowdown, "hw_thermal_slowdown", "hwthrm",
       "hardware thermal slowdown: the GPU is too hot"},
      {ClockReasons::hw_power_brake_slowdown, "hw_power_brake_slowdown", "pwrbrk",
       "external power brake: the system asserted it (power supply or chassis limit)"},
      {ClockReasons::display_clock_setting, "display_clock_setting", "disp",
       "the display clock setting holds the clock"},
  };
  return reasons;
}

std::string ClockReasons::names(std::string_view sep) const {
  std::string out;
  std::uint64_t known = 0;
  for (const auto& r : clock_reasons()) {
    known |= r.bit;
    if (!has(r.bit)) continue;
    if (!out.empty()) out += sep;
    out += r.key;
  }
  if (bits_ & ~known) {
    if (!out.empty()) out += sep;
    out += "other";
  }
  return out.empty() ? "none" : out;
}

}  // namespace gpuclk::gpu
