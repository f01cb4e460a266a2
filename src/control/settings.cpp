#include "control/settings.h"

#include <fmt/format.h>

namespace gpuclk::control {

std::string_view key_of(Setting s) {
  switch (s) {
    case Setting::persistence_mode:
      return "persistence_mode";
    case Setting::application_clocks:
      return "application_clocks";
    case Setting::locked_gpu_clocks:
      return "locked_gpu_clocks";
    case Setting::locked_memory_clocks:
      return "locked_memory_clocks";
    case Setting::power_limit:
      return "power_limit";
  }
  return "?";
}

std::string_view label_of(Setting s) {
  switch (s) {
    case Setting::persistence_mode:
      return "persistence mode";
    case Setting::application_clocks:
      return "application clocks";
    case Setting::locked_gpu_clocks:
      return "locked GPU clocks";
    case Setting::locked_memory_clocks:
      return "locked memory clocks";
    case Setting::power_limit:
      return "power limit";
  }
  return "?";
}

std::optional<Setting> setting_by_key(std::string_view key) {
  for (auto s : kWriteOrder) {
    if (key_of(s) == key) return s;
  }
  return std::nullopt;
}

bool Settings::has(Setting s) const {
  switch (s) {
    case Setting::persistence_mode:
      return persistence_mode.has_value();
    case Setting::application_clocks:
      return application_clocks.has_value();
    case Setting::locked_gpu_clocks:
      return locked_gpu_clocks.has_value();
    case Setting::locked_memory_clocks:
      return locked_memory_clocks.has_value();
    case Setting::power_limit:
      return power_limit_mw.has_value();
  }
  return false;
}

void Settings::copy_from(const Settings& other, Setting s) {
  switch (s) {
    case Setting::persistence_mode:
      persistence_mode = other.persistence_mode;
      break;
    case Setting::application_clocks:
      application_clocks = other.application_clocks;
      break;
    case Setting::locked_gpu_clocks:
      locked_gpu_clocks = other.locked_gpu_clocks;
      break;
    case Setting::locked_memory_clocks:
      locked_memory_clocks = other.locked_memory_clocks;
      break;
    case Setting::power_limit:
      power_limit_mw = other.power_limit_mw;
      break;
  }
}

void Settings::clear(Setting s) { copy_from(Settings{}, s); }

bool Settings::same(const Settings& other, Setting s) const {
  switch (s) {
    case Setting::persistence_mode:
      return persistence_mode && persistence_mode == other.persistence_mode;
    case Setting::application_clocks:
      return application_clocks && application_clocks == other.application_clocks;
    case Setting::locked_gpu_clocks:
      return locked_gpu_clocks && locked_gpu_clocks == other.locked_gpu_clocks;
    case Setting::locked_memory_clocks:
      return locked_memory_clocks && locked_memory_clocks == other.locked_memory_clocks;
    case Setting::power_limit:
      return power_limit_mw && power_limit_mw == other.power_limit_mw;
  }
  return false;
}

bool Settings::empty() const {
  for (auto s : kWriteOrder) {
    if (has(s)) return false;
  }
  return true;
}

std::string describe(const ClockBound& b) {
  switch (b.kind) {
    case ClockBound::Kind::tdp:
      return "tdp";
    case ClockBound::Kind::unlimited:
      return "unlimited";
    case ClockBound::Kind::mhz:
      break;
  }
  return fmt::format("{}", b.mhz);
}

std::string describe(const ClockLock& lock) {
  if (!lock.locked) return "unlocked";
  if (lock.min == lock.max) {
    return lock.min.symbolic() ? describe(lock.min) : fmt::format("{} MHz", lock.min.mhz);
  }
  if (lock.min.symbolic()) return fmt::format("{}\u2013{}", describe(lock.min), describe(lock.max));
  return fmt::format("{}\u2013{} MHz", lock.min.mhz, lock.max.mhz);
}

std::string describe_watts(units::Milliwatts power) {
  const auto milliwatts = power.count();
  if (milliwatts % 1000 == 0) return fmt::format("{} W", milliwatts / 1000);
  return fmt::format("{}.{:03} W", milliwatts / 1000, milliwatts % 1000);
}

std::string describe(const Settings& settings, Setting s) {
  if (!settings.has(s)) return "unknown";
  switch (s) {
    case Setting::persistence_mode:
      return *settings.persistence_mode ? "on" : "off";
    case Setting::application_clocks:
      return fmt::format("{}/{} MHz", settings.application_clocks->graphics_mhz,
                         settings.application_clocks->memory_mhz);
    case Setting::locked_gpu_clocks:
      return describe(*settings.locked_gpu_clocks);
    case Setting::locked_memory_clocks:
      return describe(*settings.locked_memory_clocks);
    case Setting::power_limit:
      return describe_watts(*settings.power_limit_mw);
  }
  return "?";
}

}  // namespace gpuclk::control
