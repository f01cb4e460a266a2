// GpuControl: the one narrow interface through which gpuclk changes a GPU. NvmlGpuControl
// (nvml_gpu_control.h) is the real one, over NVML; tests use a fake. Everything that decides
// what to write (validate, transaction, restore) sees only this.
#pragma once

#include <string>
#include <vector>

#include "control/settings.h"
#include "gpu/device.h"
#include "gpu/reading.h"

namespace gpuclk::control {

// What validation needs to know about a GPU; read once when the GPU is opened.
struct GpuFacts {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  std::string pci_bus_id;    // empty when unknown
  std::string architecture;  // "Hopper", empty when unknown
  bool hopper = false;       // memory clocks cannot be locked at run time
  int unavailable_code = 0;  // the NVML code when the GPU could not be opened; 0 when it could
  bool lost = false;         // it could not be opened because it fell off the bus (exit 15)
  gpu::Reading<std::vector<gpu::SupportedClocks>> supported_clocks;  // per memory clock
  gpu::Reading<gpu::PowerConstraints> power_constraints;             // W
  gpu::Reading<units::Milliwatts> default_power_limit_mw;
  gpu::Reading<ApplicationClocks> default_application_clocks;
};

// What a GPU shows after a write, for settings NVML cannot read back (locked clocks).
struct LiveClocks {
  gpu::Reading<units::Megahertz> sm, memory;
  std::string clock_event_reasons;  // names of the active reasons, empty when none or unknown
};

class GpuControl {
 public:
  virtual ~GpuControl() = default;

  virtual const GpuFacts& facts() const = 0;
  // The settings NVML can read: persistence mode, application clocks, power limit. Locked
  // clocks have no getter on current drivers and stay nullopt; so does anything that failed.
  virtual Settings read_settings() const = 0;
  virtual LiveClocks live_clocks() const = 0;

  // Writes. Each throws gpuclk::Error (an nvml::NvmlError from the real GPU, keeping the NVML
  // code: no_permission → exit 4, not_supported → 3, invalid argument → 2).
  virtual void set_persistence_mode(bool enabled) = 0;
  virtual void set_application_clocks(ApplicationClocks clocks) = 0;
  virtual void reset_application_clocks() = 0;
  virtual void lock_gpu_clocks(ClockBound min, ClockBound max) = 0;
  virtual void reset_gpu_locked_clocks() = 0;
  virtual void lock_memory_clocks(ClockBound min, ClockBound max) = 0;
  virtual void reset_memory_locked_clocks() = 0;
  virtual void set_power_limit(units::Milliwatts limit) = 0;
};

// Writes setting `s` of `target` with the matching call: a reset call where the target is the
// driver's default (unlocked, default application clocks), a set call otherwise.
void write_setting(GpuControl& gpu, Setting s, const Settings& target);

}  // namespace gpuclk::control
