// The settings gpuclk controls, one row each: every name a setting goes by (the request's and
// policy's key, the journal's, the profile's, the command line's option, the words of messages),
// where its value lives in Settings and in Request, and the functions that parse, describe,
// serialize and write it. What is the same for every setting — has, copy, compare, merge, key
// lookup, the delegated request's typed values, the NVML write — iterates the rows
// (for_each_row) or picks one (with_row), so a new setting is a row here, a member in Settings
// and in Request, and the functions for its value type.
//
// Only src/control/ includes this; the rest of gpuclk uses the functions of settings.h and
// request.h, which it drives.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "control/gpu_control.h"
#include "control/json_checked.h"
#include "control/request.h"
#include "control/settings.h"

namespace gpuclk::control::table {

// Value: what Settings holds. Asked: what Request holds (bool for persistence, which has no
// driver default to return to; Change<Value> for the rest).
template <class Value, class Asked>
struct Row {
  using value_type = Value;
  using asked_type = Asked;

  Setting setting;
  std::string_view key;          // requests, policies, setting lists: "power_limit"
  std::string_view journal_key;  // the journal's JSON and a request's typed value: "power_limit_mw"
  std::string_view profile_key;  // profiles (TOML): "power_limit_w"
  std::string_view option;       // gpuclk set: "--power-limit"
  std::string_view label;        // messages and tables: "power limit"
  std::string_view short_label;  // one-line summaries: "power"
  std::optional<Value> Settings::*value;
  std::optional<Asked> Request::*asked;
  // The text a user types (gpuclk set, a profile, a request's string); throws Error (exit 2)
  // naming `option`.
  Asked (*parse)(std::string_view text, std::string_view option);
  std::string (*describe)(const Value&);  // "600 W", "1410–1755 MHz"
  std::string (*text)(const Value&);      // the form parse reads back: "600", "1410,1755"
  checked::json (*to_json)(const Value&);
  Value (*from_json)(const checked::json&);  // throws std::runtime_error naming what is wrong
  // The matching NVML call: a reset where the value is the driver's default (unlocked, the
  // default application clocks), a set otherwise.
  void (*write)(GpuControl&, const Value&);
};

// The functions the rows point to (setting_table.cpp).
namespace values {
std::string describe_on_off(const bool& on);
std::string text_on_off(const bool& on);
checked::json json_of(const bool& on);
bool bool_from(const checked::json& j);
void write_persistence(GpuControl& gpu, const bool& on);

std::string describe_app(const ApplicationClocks& c);
std::string text_app(const ApplicationClocks& c);
checked::json json_of(const ApplicationClocks& c);
ApplicationClocks app_from(const checked::json& j);
void write_app(GpuControl& gpu, const ApplicationClocks& c);

std::string describe_lock(const ClockLock& lock);
std::string text_lock(const ClockLock& lock);
checked::json json_of(const ClockLock& lock);
ClockLock lock_from(const checked::json& j);
void write_gpu_lock(GpuControl& gpu, const ClockLock& lock);
void write_memory_lock(GpuControl& gpu, const ClockLock& lock);

std::string describe_power(const units::Milliwatts& mw);
std::string text_power(const units::Milliwatts& mw);
checked::json json_of(const units::Milliwatts& mw);
units::Milliwatts power_from(const checked::json& j);
void write_power(GpuControl& gpu, const units::Milliwatts& mw);
}  // namespace values

// In kWriteOrder (checked in setting_table.cpp).
inline constexpr std::tuple kRows{
    Row<bool, bool>{.setting = Setting::persistence_mode,
                    .key = "persistence_mode",
                    .journal_key = "persistence_mode",
                    .profile_key = "persistence_mode",
                    .option = "--persistence",
                    .label = "persistence mode",
                    .short_label = "persistence",
                    .value = &Settings::persistence_mode,
                    .asked = &Request::persistence_mode,
                    .parse = &parse_on_off,
                    .describe = &values::describe_on_off,
                    .text = &values::text_on_off,
                    .to_json = &values::json_of,
                    .from_json = &values::bool_from,
                    .write = &values::write_persistence},
    Row<ApplicationClocks, Change<ApplicationClocks>>{.setting = Setting::application_clocks,
                                                      .key = "application_clocks",
                                                      .journal_key = "application_clocks",
                                                      .profile_key = "application_clocks",
                                                      .option = "--app-clocks",
                                                      .label = "application clocks",
                                                      .short_label = "app clocks",
                                                      .value = &Settings::application_clocks,
                                                      .asked = &Request::application_clocks,
                                                      .parse = &parse_application_clocks,
                                                      .describe = &values::describe_app,
                                                      .text = &values::text_app,
                                                      .to_json = &values::json_of,
                                                      .from_json = &values::app_from,
                                                      .write = &values::write_app},
    Row<ClockLock, Change<ClockLock>>{.setting = Setting::locked_gpu_clocks,
                                      .key = "locked_gpu_clocks",
                                      .journal_key = "locked_gpu_clocks",
                                      .profile_key = "locked_gpu_clocks",
                                      .option = "--lock-gpu-clocks",
                                      .label = "locked GPU clocks",
                                      .short_label = "GPU lock",
                                      .value = &Settings::locked_gpu_clocks,
                                      .asked = &Request::locked_gpu_clocks,
                                      .parse = &parse_clock_lock,
                                      .describe = &values::describe_lock,
                                      .text = &values::text_lock,
                                      .to_json = &values::json_of,
                                      .from_json = &values::lock_from,
                                      .write = &values::write_gpu_lock},
    Row<ClockLock, Change<ClockLock>>{.setting = Setting::locked_memory_clocks,
                                      .key = "locked_memory_clocks",
                                      .journal_key = "locked_memory_clocks",
                                      .profile_key = "locked_memory_clocks",
                                      .option = "--lock-memory-clocks",
                                      .label = "locked memory clocks",
                                      .short_label = "memory lock",
                                      .value = &Settings::locked_memory_clocks,
                                      .asked = &Request::locked_memory_clocks,
                                      .parse = &parse_clock_lock,
                                      .describe = &values::describe_lock,
                                      .text = &values::text_lock,
                                      .to_json = &values::json_of,
                                      .from_json = &values::lock_from,
                                      .write = &values::write_memory_lock},
    Row<units::Milliwatts, Change<units::Milliwatts>>{.setting = Setting::power_limit,
                                                      .key = "power_limit",
                                                      .journal_key = "power_limit_mw",
                                                      .profile_key = "power_limit_w",
                                                      .option = "--power-limit",
                                                      .label = "power limit",
                                                      .short_label = "power",
                                                      .value = &Settings::power_limit_mw,
                                                      .asked = &Request::power_limit,
                                                      .parse = &parse_power_limit,
                                                      .describe = &values::describe_power,
                                                      .text = &values::text_power,
                                                      .to_json = &values::json_of,
                                                      .from_json = &values::power_from,
                                                      .write = &values::write_power},
};

inline constexpr std::size_t kRowCount = std::tuple_size_v<decltype(kRows)>;

// f(row) for every row, in kWriteOrder.
template <class F>
void for_each_row(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, kRows);
}

// f(row) for the row of `s`; f returns the same type for every row.
template <std::size_t I = 0, class F>
decltype(auto) with_row(Setting s, F&& f) {
  const auto& row = std::get<I>(kRows);
  if constexpr (I + 1 == kRowCount) {
    return f(row);  // the last row: every Setting has one (checked in setting_table.cpp)
  } else {
    if (row.setting == s) return f(row);
    return with_row<I + 1>(s, std::forward<F>(f));
  }
}

// What a request asks of one setting, as the text its parser reads back: "600", "default".
template <class Value, class Asked>
std::string asked_text(const Row<Value, Asked>& row, const Asked& asked) {
  if constexpr (std::is_same_v<Asked, Value>) {
    return row.text(asked);
  } else {
    return asked.to_default ? std::string("default") : row.text(asked.value);
  }
}

// The typed form of what a request asks (a delegated request's value): the journal's JSON of
// the value, or "default".
template <class Value, class Asked>
checked::json asked_json(const Row<Value, Asked>& row, const Asked& asked) {
  if constexpr (std::is_same_v<Asked, Value>) {
    return row.to_json(asked);
  } else {
    return asked.to_default ? checked::json("default") : row.to_json(asked.value);
  }
}

}  // namespace gpuclk::control::table
