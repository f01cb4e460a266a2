#include "control/setting_table.h"

#include <fmt/format.h>

#include "util/parse.h"

namespace gpuclk::control::table {
namespace {

// The rows are in kWriteOrder, and every Setting has one (with_row takes the last for granted).
constexpr bool rows_in_write_order() {
  bool ok = kRowCount == kWriteOrder.size();
  std::size_t i = 0;
  std::apply([&](const auto&... row) { ((ok = ok && row.setting == kWriteOrder[i++]), ...); },
             kRows);
  return ok;
}
static_assert(rows_in_write_order(), "kRows must list every Setting, in kWriteOrder");

checked::json bound_json(const ClockBound& b) {
  if (b.symbolic()) return describe(b);
  return b.mhz;
}

ClockBound bound_from(const checked::json& j) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    if (s == "tdp") return ClockBound::tdp();
    if (s == "unlimited") return ClockBound::unlimited();
    throw std::runtime_error("unknown clock limit '" + parse::quote(s) + "'");
  }
  return ClockBound::megahertz(checked::mhz(j, "a clock limit"));
}

}  // namespace

namespace values {

std::string describe_on_off(const bool& on) { return on ? "on" : "off"; }
std::string text_on_off(const bool& on) { return on ? "on" : "off"; }
checked::json json_of(const bool& on) { return on; }
bool bool_from(const checked::json& j) {
  if (!j.is_boolean()) throw std::runtime_error("persistence_mode must be true or false");
  return j.get<bool>();
}
void write_persistence(GpuControl& gpu, const bool& on) { gpu.set_persistence_mode(on); }

// Graphics first, as nvidia-smi shows them; memory first where they are typed (-ac's order).
std::string describe_app(const ApplicationClocks& c) {
  return fmt::format("{}/{} MHz", c.graphics_mhz, c.memory_mhz);
}
std::string text_app(const ApplicationClocks& c) {
  return fmt::format("{},{}", c.memory_mhz, c.graphics_mhz);
}
checked::json json_of(const ApplicationClocks& c) {
  return {{"memory_mhz", c.memory_mhz}, {"graphics_mhz", c.graphics_mhz}};
}
ApplicationClocks app_from(const checked::json& j) {
  const auto& a = checked::object(j, "application_clocks");
  return {checked::mhz(a.at("memory_mhz"), "memory_mhz"),
          checked::mhz(a.at("graphics_mhz"), "graphics_mhz")};
}
void write_app(GpuControl& gpu, const ApplicationClocks& c) {
  // The reset call also drops what a set call pinned on Pascal and later (NVML docs), so going
  // back to the default is a reset, not a set to the default values.
  const auto& defaults = gpu.facts().default_application_clocks;
  if (defaults && *defaults == c)
    gpu.reset_application_clocks();
  else
    gpu.set_application_clocks(c);
}

std::string describe_lock(const ClockLock& lock) { return describe(lock); }
std::string text_lock(const ClockLock& lock) {
  if (!lock.locked) return "default";
  return fmt::format("{},{}", describe(lock.min), describe(lock.max));
}
checked::json json_of(const ClockLock& lock) {
  if (!lock.locked) return "unlocked";
  return {{"min_mhz", bound_json(lock.min)}, {"max_mhz", bound_json(lock.max)}};
}
ClockLock lock_from(const checked::json& j) {
  if (j.is_string() && j.get<std::string>() == "unlocked") return ClockLock::none();
  checked::object(j, "a clock lock");
  return ClockLock::range(bound_from(j.at("min_mhz")), bound_from(j.at("max_mhz")));
}
void write_gpu_lock(GpuControl& gpu, const ClockLock& lock) {
  if (lock.locked)
    gpu.lock_gpu_clocks(lock.min, lock.max);
  else
    gpu.reset_gpu_locked_clocks();
}
void write_memory_lock(GpuControl& gpu, const ClockLock& lock) {
  if (lock.locked)
    gpu.lock_memory_clocks(lock.min, lock.max);
  else
    gpu.reset_memory_locked_clocks();
}

std::string describe_power(const units::Milliwatts& mw) { return describe_watts(mw); }
std::string text_power(const units::Milliwatts& mw) {
  const auto v = mw.count();
  return v % 1000 == 0 ? fmt::format("{}", v / 1000) : fmt::format("{}.{:03}", v / 1000, v % 1000);
}
checked::json json_of(const units::Milliwatts& mw) { return mw.count(); }
// The driver's limits are 32-bit milliwatts.
units::Milliwatts power_from(const checked::json& j) {
  return units::Milliwatts(checked::whole(j, "power_limit_mw", 0xffffffffu));
}
void write_power(GpuControl& gpu, const units::Milliwatts& mw) { gpu.set_power_limit(mw); }

}  // namespace values
}  // namespace gpuclk::control::table
