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
constexpr std::uint64_t kRetiredPageBytes = 4096;

// A page-aligned address inside the GPU's memory, the same for a GPU, cause and page number in
// every process.
std::uint64_t retired_page_address(const GpuConfig& config, std::uint64_t cause, std::uint64_t n) {
  const std::uint64_t pages =
      std::max<std::uint64_t>(1, config.spec->memory_total_bytes / kRetiredPageBytes);
  const double noise = unit_noise(config.index, 0x5e7a11edULL + cause * 1000 + n);
  return std::min(pages - 1, static_cast<std::uint64_t>(noise * static_cast<double>(pages))) *
         kRetiredPageBytes;
}

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

RetiredPages retired_pages(const GpuConfig& config, const GpuDynamics& d) {
  RetiredPages out;
  if (!config.spec->page_retirement) return out;
  for (std::uint32_t n = 0; n < config.retired_sbe_pages; ++n) {
    out.multiple_sbe.push_back(
        {retired_page_address(config, 0, n), -3600.0 * (config.retired_sbe_pages - n)});
  }
  for (std::uint32_t n = 0; n < config.retired_dbe_pages; ++n) {
    out.dbe.push_back(
        {retired_page_address(config, 1, n), -3600.0 * (config.retired_dbe_pages - n)});
  }
  // Uncorrected errors since power-on, at the scenario's rate: the k-th came at k / rate.
  const std::uint64_t room =
      kMaxRetiredPages -
      std::min<std::uint64_t>(kMaxRetiredPages, out.multiple_sbe.size() + out.dbe.size());
  const std::uint64_t fresh = std::min(d.ecc_uncorrected_volatile, room);
  const double per_s = config.ecc_uncorrected_per_hour / 3600.0;
  for (std::uint64_t k = 1; k <= fresh; ++k) {
    out.dbe.push_back({retired_page_address(config, 1, config.retired_dbe_pages + k - 1),
                       per_s > 0 ? static_cast<double>(k) / per_s : 0.0});
  }
  out.pending = config.retired_pages_pending || d.ecc_uncorrected_volatile > 0;
  return out;
}

}  // namespace gpuclk::sim
