// Faults `gpuclk doctor` looks for, kept apart from the physics: a power brake (HW slowdown),
// a boost clock that wanders under load (jitter), uncorrected ECC errors and PCIe replays that
// accrue. Every effect is a pure function of the scenario and simulated time, so every process
// sees the same GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu_state.h"
#include "scenario.h"

namespace gpuclk::sim {

// True while the power brake holds (the last power_brake_seconds of every period).
bool power_brake_active(const GpuConfig& config, double now_s);

// The clock ceiling after the faults: halved under the power brake (as HW slowdown does), and
// up to clock_jitter_mhz lower, changing every 0.3 s, while a context is held.
std::uint32_t fault_ceiling(const GpuConfig& config, double now_s, bool context,
                            std::uint32_t ceiling);

// Clock event reasons the faults report (HW slowdown + HW power brake under the brake).
std::uint64_t fault_reasons(const GpuConfig& config, double now_s);

// Uncorrected ECC errors and PCIe replays accrued over dt.
void accrue_fault_counters(const GpuConfig& config, GpuDynamics& d, double dt);

// Dynamic page retirement (GPU models with spec.page_retirement; kMaxRetiredPages in scenario.h).
struct RetiredPage {
  std::uint64_t address = 0;  // the page's hardware address (4 KiB aligned), as Xid 63 names it
  double retired_at_s = 0;    // simulated time; negative: before power-on
};
struct RetiredPages {
  std::vector<RetiredPage> multiple_sbe;  // retired after repeated single-bit errors
  std::vector<RetiredPage> dbe;           // retired after a double-bit error
  bool pending = false;                   // a retirement waits for the next GPU reset
};

// The scenario's pages (retired an hour apart before power-on), then one double-bit page for
// each uncorrected error counted since power-on, all of those pending until the next reset; at
// most kMaxRetiredPages in all (the driver cannot retire more). Empty for other GPU models.
RetiredPages retired_pages(const GpuConfig& config, const GpuDynamics& d);

}  // namespace gpuclk::sim
