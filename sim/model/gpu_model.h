// One GPU's time evolution: initial state, and one model step (DVFS, power cap, workload
// progress, thermal, counters). Deterministic: the same state and dt give the same result.
#pragma once

#include "gpu_state.h"
#include "scenario.h"
#include "workload.h"

namespace gpuclk::sim {

// The state a GPU powers on in: scenario settings, idle and at its idle thermal equilibrium.
GpuState initial_gpu_state(const GpuConfig& config);

// Advances `state` by dt seconds starting at simulated time `now_s` (normally kTickSeconds; larger
// steps only to fast-forward long gaps, where per-tick detail no longer matters).
void step_gpu(const GpuConfig& config, GpuState& state, double now_s, double dt);

// The phase the workload is in (nullptr before the start or after a non-repeating workload ends).
const Phase* current_phase(const GpuConfig& config, const GpuState& state);

// The process holding the GPU's context (meaningful while dynamics.context_active): an injected
// job's (named "gpuclk sim-job", 2 GiB — an ASSUMPTION: a GEMM's three 8192² matrices or a
// copy's two 1 GiB buffers fit), else the scenario workload's.
Process context_process(const GpuConfig& config, const GpuState& state);

// Averages over the last second (kWindowTicks ticks).
double average_power_w(const GpuState& state);
double average_busy(const GpuState& state);
double average_dram(const GpuState& state);
// NVML's memory power scope, averaged like average_power_w.
double average_memory_power_w(const GpuState& state);

// Clocks the settings ask for, before power and thermal limits: [lowest, highest] SM MHz.
struct ClockRange {
  std::uint32_t low_mhz = 0;
  std::uint32_t high_mhz = 0;
};
ClockRange requested_sm_range(const GpuSpec& spec, const GpuSettings& settings);
std::uint32_t requested_memory_mhz(const GpuSpec& spec, const GpuSettings& settings);

}  // namespace gpuclk::sim
