#include "faults.h"

#include <algorithm>
#include <cmath>

namespace gpuclk::sim {

namespace {

// splitmix64's finaliser: a deterministic "random" value per GPU and time slot.
double unit_noise(std::uint64_t gpu, std::uint64_t slot) {
  std::uint64_t x = gpu * 0x9e3779b97f4a7c15ULL + slot + 0x632be59bd9b4e019ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 53);
}

constexpr double kJitterSlotS = 0.3;

}  // namespace

bool power_brake_active(const GpuConfig& config, double now_s) {
  if (config.power_brake_seconds <= 0 || config.power_brake_period_s <= 0) return false;
  return std::fmod(now_s, config.power_brake_period_s) >=
         config.power_brake_period_s - config.power_brake_seconds;
}

std::uint32_t fault_ceiling(const GpuConfig& config, double now_s, bool context,
                            std::uint32_t ceiling) {
  const GpuSpec& spec = *config.spec;
  if (power_brake_active(config, now_s))
    ceiling = std::min(ceiling, spec.floor_sm_clock(spec.sm_max_mhz / 2));
  if (context && config.clock_jitter_mhz > 0) {
    const auto slot = static_cast<std::uint64_t>(std::max(0.0, now_s) / kJitterSlotS);
    const double drop = config.clock_jitter_mhz * unit_noise(config.index, slot);
    const double wanted = std::max<double>(spec.sm_min_mhz, ceiling - drop);
    ceiling = std::min(ceiling, spec.floor_sm_clock(static_cast<std::uint32_t>(wanted)));
  }
  return ceiling;
}

std::uint64_t fault_reasons(const GpuConfig& config, double now_s) {
  return power_brake_active(config, now_s) ? reason::hw_slowdown | reason::hw_power_brake : 0;
}

void accrue_fault_counters(const GpuConfig& config, GpuDynamics& d, double dt) {
  d.ecc_uncorrected_accrued += config.ecc_uncorrected_per_hour * dt / 3600.0;
  if (d.ecc_uncorrected_accrued >= 1) {
    const auto whole = static_cast<std::uint64_t>(d.ecc_uncorrected_accrued);
    d.ecc_uncorrected_accrued -= static_cast<double>(whole);
    d.ecc_uncorrected_volatile += whole;
    d.ecc_uncorrected_aggregate += whole;
  }
  d.pcie_replays_accrued += config.pcie_replays_per_hour * dt / 3600.0;
  if (d.pcie_replays_accrued >= 1) {
    const auto whole = static_cast<std::uint64_t>(d.pcie_replays_accrued);
    d.pcie_replays_accrued -= static_cast<double>(whole);
    d.pcie_replays += whole;
  }
}

}  // namespace gpuclk::sim
