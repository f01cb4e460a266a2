#include "govern/sampler_signals.h"

#include <chrono>

namespace gpuclk::govern {

Signals signals_from(const telemetry::GpuSnapshot& gpu, telemetry::TimePoint started,
                     telemetry::Duration max_gpm_age, bool gpm_supported) {
  Signals s;
  if (!gpu.fast) return s;
  const auto& f = *gpu.fast;
  s.time_s = std::chrono::duration<double>(f.time - started).count();
  s.sm_clock = f.sm_clock;
  s.memory_clock = f.memory_clock;
  s.power = f.power;
  s.gpu_utilization = f.gpu_utilization;
  s.reasons = f.clock_reasons;
  if (gpm_supported) {
    if (gpu.slow && gpu.slow->gpm && f.time - gpu.slow->time <= max_gpm_age) {
      const auto& g = *gpu.slow->gpm;
      s.sm_active = g.sm;
      s.tensor_active = g.tensor;
      s.dram_active = g.dram;
      s.fp64_active = g.fp64;
      s.fp32_active = g.fp32;
      s.fp16_active = g.fp16;
    }
  } else {
    s.sm_active = f.gpu_utilization;
    s.dram_active = f.memory_utilization;
  }
  return s;
}

}  // namespace gpuclk::govern
