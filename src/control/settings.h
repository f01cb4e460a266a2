// The GPU settings gpuclk controls, their values, and how they read in text.
//
// A Settings holds any subset of them (std::nullopt = not part of it, or not known): the state
// read from a GPU, a target to write, an original to restore. Clocks are MHz, power is watts
// held as integer milliwatts, as NVML takes it, so a restore writes back exactly what was read.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpu/units.h"

namespace gpuclk::control {

using units::Megahertz;
using units::Watts;

// Bounds for reading a setting from text or a file (a journal, a policy): far above any GPU, so
// a value past them is a typo or corruption, never a real clock or power limit.
inline constexpr unsigned kMaxMhz = 100'000;
inline constexpr std::uint64_t kMaxMilliwatts = 100'000'000;  // 100 kW

enum class Setting {
  persistence_mode,
  application_clocks,
  locked_gpu_clocks,
  locked_memory_clocks,
  power_limit
};

// The order gpuclk writes them in: persistence first (so the rest survives the last client
// exiting), power last. Restores and rollbacks go in reverse.
inline constexpr std::array<Setting, 5> kWriteOrder = {
    Setting::persistence_mode, Setting::application_clocks, Setting::locked_gpu_clocks,
    Setting::locked_memory_clocks, Setting::power_limit};

// "locked_gpu_clocks": the journal's and JSON's key.
std::string_view key_of(Setting s);
// "locked GPU clocks": for messages and tables.
std::string_view label_of(Setting s);
std::optional<Setting> setting_by_key(std::string_view key);

// One end of a clock lock: MHz, or a limit the driver resolves (NVML_CLOCK_LIMIT_ID_*):
// `tdp` is the clock the GPU sustains at its TDP (the base clock), `unlimited` no bound.
struct ClockBound {
  enum class Kind { mhz, tdp, unlimited };
  Kind kind = Kind::mhz;
  unsigned mhz = 0;  // when kind == mhz

  static ClockBound megahertz(unsigned v) { return {Kind::mhz, v}; }
  static ClockBound tdp() { return {Kind::tdp, 0}; }
  static ClockBound unlimited() { return {Kind::unlimited, 0}; }
  bool symbolic() const { return kind != Kind::mhz; }
  bool operator==(const ClockBound&) const = default;
};

// A clock lock: unlocked, or locked to [min, max]. The driver takes two MHz values or two
// symbolic ones, never one of each.
struct ClockLock {
  bool locked = false;
  ClockBound min, max;

  static ClockLock none() { return {}; }
  static ClockLock range(ClockBound lo, ClockBound hi) { return {true, lo, hi}; }
  bool operator==(const ClockLock&) const = default;
};

struct ApplicationClocks {
  unsigned memory_mhz = 0;
  unsigned graphics_mhz = 0;
  bool operator==(const ApplicationClocks&) const = default;
};

struct Settings {
  std::optional<bool> persistence_mode;
  std::optional<ApplicationClocks> application_clocks;
  std::optional<ClockLock> locked_gpu_clocks;
  std::optional<ClockLock> locked_memory_clocks;
  std::optional<units::Milliwatts> power_limit_mw;

  bool has(Setting s) const;
  // Copies setting `s` from `other` (clearing it here if `other` lacks it).
  void copy_from(const Settings& other, Setting s);
  void clear(Setting s);
  // Both have `s` with equal values.
  bool same(const Settings& other, Setting s) const;
  bool empty() const;
};

// "on", "1980/2619 MHz" (graphics/memory, as nvidia-smi's -ac takes them reversed), "1755 MHz",
// "1410–1755 MHz", "tdp", "unlocked", "600 W"; "unknown" when `s` is absent.
std::string describe(const Settings& settings, Setting s);
std::string describe(const ClockBound& b);
std::string describe(const ClockLock& lock);
std::string describe_watts(units::Milliwatts power);

}  // namespace gpuclk::control
