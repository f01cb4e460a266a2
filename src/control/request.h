// What a user asks gpuclk to change, as typed on the command line or in a profile, before it is
// checked against any GPU (validate.h does that). Parsers throw Error (exit 2) naming the option
// and the form it takes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "control/settings.h"

namespace gpuclk::control {

// Set a value, or return the setting to the driver's default.
template <class T>
struct Change {
  bool to_default = false;
  T value{};

  static Change of(T v) { return {false, std::move(v)}; }
  static Change driver_default() { return {true, T{}}; }
  bool operator==(const Change&) const = default;
};

struct Request {
  std::optional<bool> persistence_mode;
  std::optional<Change<ApplicationClocks>> application_clocks;
  std::optional<Change<ClockLock>> locked_gpu_clocks;     // to_default: unlock
  std::optional<Change<ClockLock>> locked_memory_clocks;  // to_default: unlock
  std::optional<Change<units::Milliwatts>> power_limit;

  bool has(Setting s) const;
  bool empty() const;
  // The settings of `over` replace these (a profile's per-GPU section over its defaults).
  void merge(const Request& over);
};

// "on" | "off" (also 1/0, true/false, enabled/disabled).
bool parse_on_off(std::string_view text, std::string_view option);
// "MEM,GFX" in MHz (nvidia-smi -ac order), or "default".
Change<ApplicationClocks> parse_application_clocks(std::string_view text, std::string_view option);
// "MIN[,MAX]" in MHz (MAX defaults to MIN), "tdp" (= tdp,tdp), "tdp,unlimited", "unlimited,tdp",
// or "default" / "unlimited,unlimited" (both unlock).
Change<ClockLock> parse_clock_lock(std::string_view text, std::string_view option);
// Watts ("600", "612.5", "600W"; at most three decimals: the driver takes milliwatts), or
// "default". Converted to milliwatts exactly, without floating point; a value above what any
// 64-bit count holds is refused here, anything else is checked against the GPU's range by
// validate().
Change<units::Milliwatts> parse_power_limit(std::string_view text, std::string_view option);

// Setting `s` of `settings` as the text the parsers above take, reading back as the same value
// (a delegated `set` request carries it): "on", "2619,1755" (memory,graphics), "1410,1755",
// "tdp,unlimited", "default" for an unlocked clock lock, "612.5". Empty when `settings` lacks it.
std::string setting_text(const Settings& settings, Setting s);

// Setting `s` of `request` from text, with that setting's parser above (one parser per setting,
// for the command line, profiles and delegated requests alike).
void parse_setting(Request& request, Setting s, std::string_view text, std::string_view option);
// The option `gpuclk set` takes it with: "--power-limit".
std::string option_of(Setting s);
// What `request` asks, as text for a log: "power_limit=600 locked_gpu_clocks=default".
std::string asked_text(const Request& request);

// A delegated request's settings (docs/serve.md): a JSON object. gpuclk sends the values it has
// parsed in the journal's typed form, under the journal's keys ({"power_limit_mw": 600000},
// "default" to return to the driver's default); a string under the request key is text as
// gpuclk set takes it ({"power_limit": "600"}: a person's request by hand). request_from_json
// throws Error (exit 2) naming `where` ("settings") and the key.
std::string request_to_json(const Request& request);
Request request_from_json(const std::string& settings, std::string_view where);

}  // namespace gpuclk::control
