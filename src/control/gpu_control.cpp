#include "control/gpu_control.h"

#include <stdexcept>

namespace gpuclk::control {

void write_setting(GpuControl& gpu, Setting s, const Settings& target) {
  if (!target.has(s)) throw std::logic_error("write_setting: target lacks the setting");
  switch (s) {
    case Setting::persistence_mode:
      gpu.set_persistence_mode(*target.persistence_mode);
      return;
    case Setting::application_clocks: {
      // The reset call also drops what a set call pinned on Pascal and later (NVML docs), so
      // going back to the default is a reset, not a set to the default values.
      const auto& defaults = gpu.facts().default_application_clocks;
      if (defaults && *defaults == *target.application_clocks)
        gpu.reset_application_clocks();
      else
        gpu.set_application_clocks(*target.application_clocks);
      return;
    }
    case Setting::locked_gpu_clocks: {
      const auto& lock = *target.locked_gpu_clocks;
      if (lock.locked)
        gpu.lock_gpu_clocks(lock.min, lock.max);
      else
        gpu.reset_gpu_locked_clocks();
      return;
    }
    case Setting::locked_memory_clocks: {
      const auto& lock = *target.locked_memory_clocks;
      if (lock.locked)
        gpu.lock_memory_clocks(lock.min, lock.max);
      else
        gpu.reset_memory_locked_clocks();
      return;
    }
    case Setting::power_limit:
      gpu.set_power_limit(*target.power_limit_mw);
      return;
  }
}

}  // namespace gpuclk::control
