// A GPU model: what one kind of board is (identity, clocks, limits) and the parameters of its
// physics (power, throughput, thermal). Loaded from sim/scenarios/models/<key>.toml; immutable.
// Units are in the member names: MHz, W, °C, bytes, seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "curve.h"
#include "dtype.h"

namespace gpuclk::sim {

// The subset of NVML's device architecture numbers (nvmlDeviceArchitecture_t) we model.
enum class Architecture : std::uint32_t {
  volta = 5,
  turing = 6,
  ampere = 7,
  ada = 8,
  hopper = 9,
  blackwell = 10
};

struct GpuSpec {
  std::string key;  // model file stem, e.g. "h100-sxm5-80gb"

  // Identity, as NVML reports it.
  std::string name;
  Architecture architecture = Architecture::hopper;
  int compute_capability_major = 9;
  int compute_capability_minor = 0;
  std::uint32_t pci_device_id = 0;     // combined: device << 16 | vendor (0x10DE)
  std::uint32_t pci_subsystem_id = 0;  // combined: subsystem << 16 | subsystem vendor
  std::uint32_t sm_count = 0;
  std::uint32_t cuda_cores = 0;
  std::uint32_t memory_bus_width_bits = 0;
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_reserved_bytes = 0;        // used with no process (driver reservation)
  std::uint64_t bar1_total_bytes = 256ULL << 20;  // BAR1 aperture
  // Board strings NVML reports as they are (nvidia-smi -q: VBIOS, part number, inforom).
  std::string vbios_version;
  std::string board_part_number;
  std::string inforom_image_version;
  std::string inforom_oem_version;
  std::string inforom_ecc_version;

  // Clocks. SM clocks run from sm_max down to sm_min in steps of sm_step_half_mhz / 2 MHz, each
  // rounded down to a whole MHz, for every memory clock: 15 MHz on Ampere and later; 7.5 MHz on
  // Volta (1530, 1522, 1515, 1507, … : steps of 8 and 7 MHz in turn, as NVML lists them).
  std::uint32_t sm_min_mhz = 0;
  std::uint32_t sm_max_mhz = 0;
  std::uint32_t sm_step_half_mhz = 30;
  std::uint32_t sm_step_mhz = 15;  // the step rounded up to a whole MHz (a nominal grid spacing)
  std::uint32_t sm_base_mhz = 0;   // the "TDP" clock NVML_CLOCK_LIMIT_ID_TDP locks to
  std::vector<std::uint32_t> memory_clocks_mhz;  // supported memory clocks, descending
  std::uint32_t default_app_sm_mhz = 0;
  std::uint32_t default_app_memory_mhz = 0;
  std::uint32_t video_idle_mhz = 0;
  std::uint32_t video_max_mhz = 0;
  bool memory_locked_clocks_supported = false;  // nvmlDeviceSetMemoryLockedClocks (not Hopper)

  // Power. limit_* are the NVML power management limit constraints.
  double power_limit_min_w = 0;
  double power_limit_max_w = 0;
  double power_limit_default_w = 0;
  // The power controller's clock follows the clock the limit allows with this first-order time
  // constant (s): a burst after idle starts at the idle clock and is pulled down over ~3τ, drawing
  // more than the limit meanwhile; after it the clock climbs back as slowly. 0: every tick settles
  // at the allowed clock. The steady state is the same either way.
  double power_controller_time_constant_s = 0;
  double static_w = 0;  // leakage and board at static_reference_c, no clock running
  double static_reference_c = 0;
  double leakage_w_per_c = 0;     // leakage slope with die temperature
  double memory_interface_w = 0;  // HBM/GDDR interface at the max memory clock, ∝ memory clock
  double clock_tree_w = 0;        // clocks running, nothing issued, at sm_max and its voltage
  Curve voltage_curve;            // x: SM MHz, y: volts
  PerDataType<double> pipe_full_w{};  // dynamic W with that pipe 100 % busy at sm_max (0: no pipe)
  // Of pipe_full_w, the part a compute kernel of that type draws while it runs whatever rate it
  // achieves (operand staging, epilogue); the rest follows the achieved pipe utilisation.
  PerDataType<double> pipe_busy_w{};
  double load_store_full_w = 0;     // SM-side dynamic W at 100 % DRAM bandwidth utilisation, sm_max
  double dram_joules_per_byte = 0;  // DRAM + fabric energy per byte moved
  double pcie_joules_per_byte = 0;
  // Power by the data ([power.data]): of each term, the share that the data's switching activity
  // scales (a phase's data_activity a: the term × (1 − share × (1 − a)); 0: the data does not
  // matter), and the activity of the named inputs between zeros (0) and random values (1).
  PerDataType<double> pipe_data_share{};
  double load_store_data_share = 0;
  double dram_data_share = 0;
  double constant_activity = 0;  // every element the same nonzero value
  double pattern_activity = 0;   // a short byte pattern repeated
  // A tensor pipe's data-independent peak (W at sm_max with the pipe 100 % busy; 0: none): the
  // driver holds ds(f) × peak × utilisation within the power limit too, so a GEMM on zeros is
  // held below the top clock while it draws far less than the limit.
  PerDataType<double> pipe_peak_w{};
  // NVML's memory power scope (NVML_POWER_SCOPE_MEMORY, average only): idle W at the max memory
  // clock (∝ memory clock) and J per DRAM byte (scaled by the data like dram_joules_per_byte).
  bool memory_power_supported = false;
  double memory_scope_idle_w = 0;
  double memory_scope_joules_per_byte = 0;
  // Under a compute kernel the memory scope follows the operand tiles' traffic through L2 (bytes
  // per FLOP from the GEMM's output tile and operand size), J per byte per data type, instead of
  // the kernel's DRAM estimate; nothing while the GEMM fits in L2. 0: the DRAM bytes as for any
  // kernel. tile_data_share: the part the data's switching activity scales.
  PerDataType<double> memory_scope_tile_joules_per_byte{};
  double memory_scope_tile_data_share = 0;

  // Throughput (roofline).
  PerDataType<double> flop_per_clock_per_sm{};  // dense; 0 where the GPU has no such pipe
  PerDataType<double> default_efficiency{};     // achieved / peak for the phase kind's kernels
  // GEMMs with a shape ([gemm]): rate = flop / (flop / (peak × base × tile fill × K / (K + k0)) +
  // call overhead / waves), the tile the one of 128×256, 128×128 (× tile_q128), 64×128
  // (× tile_q64) that fills the SMs' waves best; DRAM bytes per call = operands × rereads +
  // result, × l2_resident when both fit in L2 together (sim/tools/fit_power.py fits them).
  PerDataType<double> gemm_base_efficiency{};  // 0: default_efficiency
  PerDataType<double> gemm_k0{};
  double gemm_call_overhead_s = 0;
  double gemm_tile_q128 = 1;
  double gemm_tile_q64 = 1;
  double gemm_operand_rereads = 1;
  double gemm_l2_resident = 1;
  double l2_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;  // peak at the max memory clock
  double memory_default_efficiency = 0;     // achieved / peak of a device copy
  Curve bandwidth_vs_sm_throughput;  // x: SM issue rate / max (count × clock), y: bandwidth / max

  // Thermal: die above heat sink (fast), heat sink above ambient (slow); both first order.
  double ambient_c = 0;
  double die_k_per_w = 0;
  double die_time_constant_s = 0;
  double sink_k_per_w = 0;
  double sink_heat_capacity_j_per_k = 0;
  double memory_temp_offset_c = 0;  // HBM temperature above the die's heat sink
  double shutdown_c = 0;
  double slowdown_c = 0;  // HW slowdown (clocks halved)
  double gpu_max_c = 0;   // SW thermal slowdown target
  double memory_max_c = 0;

  // Bus and features.
  std::uint32_t pcie_max_generation = 0;
  std::uint32_t pcie_max_width = 0;
  std::uint32_t nvlink_count = 0;
  std::uint32_t nvlink_generation = 0;  // 3: A100 (NVLink 3.0), 4: H100 (NVLink 4.0)
  bool has_fan = false;
  bool gpm_supported = false;
  bool ecc_supported = false;
  bool mig_supported = false;  // MIG mode exists (GA100, Hopper); the model never enables it
  bool power_average_supported = true;  // NVML_FI_DEV_POWER_AVERAGE (not GA100)
  // DRAM banks with spare rows for row remapping (nvidia-smi's "Bank Remap Availability
  // Histogram" max); 0: no row remapping (nvmlDeviceGetRemappedRows answers NOT_SUPPORTED).
  std::uint32_t row_remapper_banks = 0;
  // Dynamic page retirement (Kepler to Turing: a 4 KiB page is retired after a double-bit ECC
  // error or a second single-bit one at its address); false: the nvmlDeviceGetRetiredPages
  // family answers NOT_SUPPORTED, as on Ampere and later, which remap rows instead.
  bool page_retirement = false;

  // The k-th supported SM clock from the top (k = 0: sm_max); no bound check.
  std::uint32_t sm_clock_at(std::uint32_t k) const {
    return sm_max_mhz -
           static_cast<std::uint32_t>((static_cast<std::uint64_t>(k) * sm_step_half_mhz + 1) / 2);
  }
  // How many SM clocks the GPU supports.
  std::uint32_t sm_clock_count() const {
    if (sm_step_half_mhz == 0 || sm_min_mhz > sm_max_mhz) return 0;
    return 2 * (sm_max_mhz - sm_min_mhz) / sm_step_half_mhz + 1;
  }
  // Every SM clock the GPU supports, descending (NVML's order).
  std::vector<std::uint32_t> supported_sm_clocks() const {
    std::vector<std::uint32_t> clocks;
    const std::uint32_t count = sm_clock_count();
    clocks.reserve(count);
    for (std::uint32_t k = 0; k < count; ++k) clocks.push_back(sm_clock_at(k));
    return clocks;
  }
  bool is_supported_sm_clock(std::uint32_t mhz) const {
    if (mhz < sm_min_mhz || mhz > sm_max_mhz) return false;
    return sm_clock_at(2 * (sm_max_mhz - mhz) / sm_step_half_mhz) == mhz;
  }
  bool is_supported_memory_clock(std::uint32_t mhz) const {
    for (auto m : memory_clocks_mhz) {
      if (m == mhz) return true;
    }
    return false;
  }
  std::uint32_t max_memory_mhz() const {
    return memory_clocks_mhz.empty() ? 0 : memory_clocks_mhz.front();
  }
  std::uint32_t min_memory_mhz() const {
    return memory_clocks_mhz.empty() ? 0 : memory_clocks_mhz.back();
  }
  // Highest supported SM clock ≤ mhz (sm_min if none).
  std::uint32_t floor_sm_clock(std::uint32_t mhz) const {
    if (mhz >= sm_max_mhz) return sm_max_mhz;
    if (mhz <= sm_min_mhz) return sm_min_mhz;
    // The first k whose clock is ≤ mhz: (k·step2 + 1) / 2 ≥ max − mhz.
    const std::uint32_t twice_below = 2 * (sm_max_mhz - mhz);
    return sm_clock_at((twice_below - 1 + sm_step_half_mhz - 1) / sm_step_half_mhz);
  }
  // Lowest supported SM clock ≥ mhz (sm_max if none).
  std::uint32_t ceil_sm_clock(std::uint32_t mhz) const {
    if (mhz <= sm_min_mhz) return sm_min_mhz;
    if (mhz >= sm_max_mhz) return sm_max_mhz;
    return sm_clock_at(2 * (sm_max_mhz - mhz) / sm_step_half_mhz);
  }
  // The supported SM clock one step below / above mhz (a supported clock); sm_min / sm_max at
  // the ends.
  std::uint32_t lower_sm_clock(std::uint32_t mhz) const {
    return mhz <= sm_min_mhz ? sm_min_mhz : floor_sm_clock(mhz - 1);
  }
  std::uint32_t higher_sm_clock(std::uint32_t mhz) const {
    return mhz >= sm_max_mhz ? sm_max_mhz : ceil_sm_clock(mhz + 1);
  }
};

}  // namespace gpuclk::sim
