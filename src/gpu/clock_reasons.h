// Clock event reasons (NVML's "throttle reasons"): why the SM clock is below its maximum.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::gpu {

struct ClockReasonInfo {
  std::uint64_t bit;
  std::string_view key;         // stable identifier: JSON keys, Prometheus label values
  std::string_view short_name;  // dmon column text
  std::string_view meaning;     // one line for `gpuclk clocks`
};

// All reasons gpuclk knows, in NVML bit order.
const std::vector<ClockReasonInfo>& clock_reasons();

// A set of reason bits as NVML reports them.
class ClockReasons {
 public:
  constexpr ClockReasons() = default;
  constexpr explicit ClockReasons(std::uint64_t bits) : bits_(bits) {}
  constexpr std::uint64_t bits() const { return bits_; }
  constexpr bool has(std::uint64_t bit) const { return (bits_ & bit) != 0; }
  constexpr bool none() const { return bits_ == 0; }
  // "sw_power_cap,gpu_idle" (keys joined by sep); "none" when empty.
  std::string names(std::string_view sep = ",") const;
  // Reasons that mean "held down by a limit" rather than idle or a setting.
  constexpr bool limiting() const { return (bits_ & ~std::uint64_t{0x1 | 0x2 | 0x100}) != 0; }

  static constexpr std::uint64_t gpu_idle = 0x1;
  static constexpr std::uint64_t applications_clocks_setting = 0x2;
  static constexpr std::uint64_t sw_power_cap = 0x4;
  static constexpr std::uint64_t hw_slowdown = 0x8;
  static constexpr std::uint64_t sync_boost = 0x10;
  static constexpr std::uint64_t sw_thermal_slowdown = 0x20;
  static constexpr std::uint64_t hw_thermal_slowdown = 0x40;
  static constexpr std::uint64_t hw_power_brake_slowdown = 0x80;
  static constexpr std::uint64_t display_clock_setting = 0x100;

 private:
  std::uint64_t bits_ = 0;
};

}  // namespace gpuclk::gpu
