// What a bench report records about where it ran, so two reports can be compared later:
// versions (gpuclk, driver, CUDA), the host, and per GPU its identity and clock/power settings.
// Read once through NVML before the workloads start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/report.h"
#include "gpu/device.h"
#include "output/value.h"

namespace gpuclk::bench {

struct GpuSettings {
  GpuFacts facts;
  std::string compute_capability;  // "9.0"; empty when unknown
  std::optional<units::Watts> default_power_limit;
  std::optional<units::Megahertz> app_sm_clock, app_memory_clock;  // application clocks now
  std::optional<units::Megahertz> default_app_sm_clock, default_app_memory_clock;
  std::optional<bool> persistence_mode;
  std::optional<units::Celsius> temperature_at_start;
};

struct Environment {
  std::string gpuclk_version;
  std::string hostname;
  std::string started_at;  // UTC, ISO 8601
  std::string command_line;
  std::optional<std::string> driver_version, nvml_version;
  std::optional<int> cuda_driver_version;  // 13000 = 13.0 (NVML)
  int cuda_runtime_version = 0;            // the one gpuclk was built with; 0 without CUDA
  std::vector<GpuSettings> gpus;
};

// What the report needs from NVML about one GPU (identity, max clocks, bus width, the enforced
// power limit now).
GpuFacts gpu_facts(const gpu::Device& device);
GpuSettings gpu_settings(const gpu::Device& device);

// Reads the environment of `devices` (all from `set`) now; `command_line` as the user typed it.
Environment collect_environment(const gpu::DeviceSet& set, const std::vector<gpu::Device*>& devices,
                                std::string command_line);

// "13.0" from 13000; "" for 0.
std::string cuda_version_text(int version);

output::Node environment_node(const Environment& env);

}  // namespace gpuclk::bench
