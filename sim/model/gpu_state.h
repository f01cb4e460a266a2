// Everything about one simulated GPU that changes with time or writes: settings plus the
// integrated physics state. Trivially copyable: the state file stores it byte for byte.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dtype.h"
#include "job.h"
#include "workload.h"

namespace gpuclk::sim {

inline constexpr double kTickSeconds = 0.01;  // model step; every state change is on a tick
inline constexpr int kWindowTicks = 100;      // 1 s: power average, utilization window

// Clock event reason bits, as NVML numbers them.
namespace reason {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clocks = 0x100;
inline constexpr std::uint64_t all_supported = 0x1ff;
}  // namespace reason

// Policies NVML keeps violation time for, in nvmlPerfPolicyType_t order (0..5, then 10, 11).
enum class Policy : int {
  power,
  thermal,
  sync_boost,
  board_limit,
  low_utilization,
  reliability,
  total_app_clocks,
  total_base_clocks,
  count
};

// Time integrals (fraction × seconds) that GPM samples difference.
enum class Activity : int {
  graphics,
  sm_active,
  sm_occupancy,
  integer,
  tensor,
  dfma_tensor,
  hmma_tensor,
  imma_tensor,
  dram,
  fp64,
  fp32,
  fp16,
  count
};

struct GpuSettings {
  std::uint32_t locked_sm_min_mhz = 0;  // both 0: no GPU clock lock
  std::uint32_t locked_sm_max_mhz = 0;
  std::uint32_t locked_memory_min_mhz = 0;  // both 0: no memory clock lock
  std::uint32_t locked_memory_max_mhz = 0;
  std::uint32_t app_sm_mhz = 0;
  std::uint32_t app_memory_mhz = 0;
  std::uint32_t power_limit_mw = 0;
  std::uint32_t persistence_mode = 1;
};

// What the GPU did during the last tick, as fractions 0..1 unless a unit says otherwise.
struct TickActivity {
  double busy = 0;                   // a kernel ran (utilization.gpu)
  double pipe[kDataTypeCount] = {};  // achieved / peak rate of each data type's pipe
  double dram = 0;                   // DRAM bandwidth used / peak at the current memory clock
  double activity[static_cast<int>(Activity::count)] = {};
  double flops_per_s = 0;
  double dram_bytes_per_s = 0;
  double pcie_rx_bytes_per_s = 0;
  double pcie_tx_bytes_per_s = 0;
  double nvlink_tx_bytes_per_s = 0;  // p2p phases: sent to a peer GPU
  // The share of the time a compute kernel of each data type ran (its pipe draws pipe_busy_w
  // then, at any rate it reaches); below 1 where a GEMM's calls leave gaps.
  double kernel[kDataTypeCount] = {};
  // The part of kernel, pipe, dram and DRAM bytes that moves no switching data: each × (1 − a)
  // for the data's activity a (Phase::data_activity; 0 for random data, the default). Kept
  // apart so that phases mixed in one tick add up: a term × (1 − share × (1 − a)) = x − share ×
  // x_quiet.
  double kernel_quiet[kDataTypeCount] = {};
  double pipe_quiet[kDataTypeCount] = {};
  double dram_quiet = 0;
  double dram_bytes_per_s_quiet = 0;
  // NVML's memory scope under compute kernels (GpuSpec::memory_scope_tile_joules_per_byte): the
  // watts of their operand tiles' traffic through L2 (and its quiet part), and the compute
  // phases' DRAM bytes/s that this term stands for in the memory scope (and their quiet part).
  double tile_w = 0;
  double tile_w_quiet = 0;
  double compute_dram_bytes_per_s = 0;
  double compute_dram_bytes_per_s_quiet = 0;
};

struct GpuDynamics {
  std::uint32_t sm_mhz = 0;
  std::uint32_t memory_mhz = 0;
  std::uint32_t thermal_cap_mhz = 0;  // SW thermal controller's ceiling
  // The power controller's clock (MHz, continuous): it follows the highest clock the power limit
  // allows with GpuSpec::power_controller_time_constant_s; sm_mhz is the supported clock nearest
  // to it, within the settings' and thermal ceiling.
  double power_clock_mhz = 0;
  std::uint32_t hw_slowdown = 0;     // 1 while HW thermal slowdown holds
  std::uint32_t context_active = 0;  // a process holds a context
  std::uint32_t lost = 0;
  std::uint64_t event_reasons = 0;
  double die_c = 0;
  double sink_c = 0;
  double power_w = 0;         // instant (this tick)
  double memory_power_w = 0;  // NVML's memory scope, instant (this tick)
  double energy_j = 0;        // since t = 0
  double window_power_w[kWindowTicks] = {};
  double window_busy[kWindowTicks] = {};
  double window_dram[kWindowTicks] = {};
  double window_memory_power_w[kWindowTicks] = {};  // NVML's memory scope
  std::uint32_t window_pos = 0;
  TickActivity last;
  double activity_seconds[static_cast<int>(Activity::count)] = {};
  std::uint64_t violation_ns[static_cast<int>(Policy::count)] = {};
  // Workload progress.
  std::uint32_t phase_index = 0;
  std::uint32_t started = 0;     // the workload's start time has passed
  std::uint64_t iterations = 0;  // completed passes over the phases
  double phase_done = 0;         // FLOPs, bytes or seconds done in the current phase
  double total_flops = 0;
  double total_dram_bytes = 0;
  double total_pcie_bytes = 0;
  // Jobs started on demand; while any runs it replaces the workload. A slot keeps its job after it
  // ends (for its status) until a new job needs the slot.
  InjectedJob jobs[kMaxJobs];
  std::uint64_t last_job_id = 0;
  // The scenario workload's process's utilization samples, while it holds a context.
  UtilizationSamples workload_samples;
  // ECC.
  double ecc_corrected_accrued = 0;  // fractional errors not yet counted
  std::uint64_t ecc_corrected_volatile = 0;
  std::uint64_t ecc_corrected_aggregate = 0;
  std::uint64_t ecc_uncorrected_volatile = 0;
  std::uint64_t ecc_uncorrected_aggregate = 0;
  double ecc_uncorrected_accrued = 0;
  // PCIe replays since power-on (NVML_FI_DEV_PCIE_REPLAY_COUNTER).
  double pcie_replays_accrued = 0;
  std::uint64_t pcie_replays = 0;
  // NVLink data sent since power-on: per link of this GPU, and per receiving GPU (a peer's
  // receive counters are the sum of what the others sent it; sim/model/nvlink.h).
  double nvlink_tx_bytes[kMaxNvLinks] = {};
  double nvlink_sent_to[kMaxNvLinkPeers] = {};
};

struct GpuState {
  GpuSettings settings;
  GpuDynamics dynamics;
};

static_assert(std::is_trivially_copyable_v<GpuState>);

// Whether any injected job runs on the GPU (the scenario's workload then pauses).
inline bool any_job_running(const GpuDynamics& d) {
  for (const InjectedJob& job : d.jobs) {
    if (job.running) return true;
  }
  return false;
}

// The slot holding job `id`; nullptr when no slot does (never started here, or superseded).
inline const InjectedJob* find_job(const GpuDynamics& d, std::uint64_t id) {
  for (const InjectedJob& job : d.jobs) {
    if (id != 0 && job.id == id) return &job;
  }
  return nullptr;
}
inline InjectedJob* find_job(GpuDynamics& d, std::uint64_t id) {
  return const_cast<InjectedJob*>(find_job(static_cast<const GpuDynamics&>(d), id));
}

}  // namespace gpuclk::sim
