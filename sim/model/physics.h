// The GPU physics as pure functions of a GpuSpec and an operating point: voltage, throughput
// (roofline), power. No state; gpu_model.cpp integrates them over time.
#pragma once

#include <cstdint>

#include "gpu_spec.h"
#include "gpu_state.h"
#include "workload.h"

namespace gpuclk::sim {

// Core voltage (V) at an SM clock (MHz), from the model's V(f) curve.
double core_voltage(const GpuSpec& spec, double sm_mhz);

// (V(f) / V(f_max))² × f / f_max: how dynamic power scales with the SM clock, 1 at sm_max.
double dynamic_scale(const GpuSpec& spec, double sm_mhz);

// Peak DRAM bandwidth (bytes/s) at a memory clock: ∝ memory clock.
double peak_dram_bandwidth(const GpuSpec& spec, double memory_mhz);

// Bandwidth (bytes/s) a kernel at efficiency 1 can pull at these clocks: the peak, reduced when
// the SMs issue too few requests (bandwidth_vs_sm_throughput at sm_mhz / sm_max).
double reachable_dram_bandwidth(const GpuSpec& spec, double sm_mhz, double memory_mhz);

// Peak dense FLOP/s of a data type at an SM clock.
double peak_flops(const GpuSpec& spec, DataType type, double sm_mhz);

// Usable PCIe bandwidth (bytes/s, one direction) of a link: line rate × encoding × 0.85 protocol.
double pcie_bandwidth(std::uint32_t generation, std::uint32_t width);

struct PhaseRates {
  double work_per_s = 0;  // the phase's own unit: FLOP/s, byte/s or s/s
  TickActivity activity;  // what the GPU does while the phase runs
  bool context = false;   // a process holds a context
};

// How fast `phase` progresses and what it keeps busy at these clocks.
PhaseRates phase_rates(const GpuSpec& spec, const Phase& phase, double sm_mhz, double memory_mhz,
                       double pcie_bytes_per_s);

// A GEMM phase's rate at an SM clock from its shape (Phase::gemm_m/n/k/batch; GpuSpec's [gemm]).
struct GemmRate {
  double flops_per_s = 0;
  double peak_flops_per_s = 0;
  double kernel_share = 1;    // of the time, the share a kernel runs (the rest: call overhead)
  double bytes_per_flop = 0;  // DRAM traffic
  // Operand traffic through L2 to the SMs per FLOP (the output tile's A and B panels); 0 when
  // the GEMM's operands and result fit in L2 together.
  double tile_bytes_per_flop = 0;
};
GemmRate gemm_rate(const GpuSpec& spec, const Phase& phase, double sm_mhz);

// Board power (W) at these clocks, die temperature and activity; leakage_factor scales the
// static part for one board (1 = the model's typical part).
double board_power(const GpuSpec& spec, double sm_mhz, double memory_mhz, double die_c,
                   const TickActivity& activity, double leakage_factor = 1);

// The tensor pipes' data-independent peak power (W) at this clock and activity
// (GpuSpec::pipe_peak_w); the power controller holds it within the limit too.
double peak_pipe_power(const GpuSpec& spec, double sm_mhz, const TickActivity& activity);

// What NVML's memory power scope reads (W): the memory's idle power and its traffic.
double memory_power(const GpuSpec& spec, double memory_mhz, const TickActivity& activity);

}  // namespace gpuclk::sim
