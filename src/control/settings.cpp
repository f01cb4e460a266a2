#include "control/settings.h"

#include <fmt/format.h>

#include "control/setting_table.h"

namespace gpuclk::control {

std::string_view key_of(Setting s) {
  return table::with_row(s, [](const auto& row) { return row.key; });
}

std::string_view label_of(Setting s) {
  return table::with_row(s, [](const auto& row) { return row.label; });
}

std::optional<Setting> setting_by_key(std::string_view key) {
  for (auto s : kWriteOrder) {
    if (key_of(s) == key) return s;
  }
  return std::nullopt;
}

bool Settings::has(Setting s) const {
  return table::with_row(s, [&](const auto& row) { return (this->*row.value).has_value(); });
}

void Settings::copy_from(const Settings& other, Setting s) {
  table::with_row(s, [&](const auto& row) { this->*row.value = other.*row.value; });
}

void Settings::clear(Setting s) { copy_from(Settings{}, s); }

bool Settings::same(const Settings& other, Setting s) const {
  return table::with_row(s, [&](const auto& row) {
    const auto& mine = this->*row.value;
    return mine && mine == other.*row.value;
  });
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
  return table::with_row(s, [&](const auto& row) { return row.describe(*(settings.*row.value)); });
}

}  // namespace gpuclk::control
