#include "control/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "util/error.h"
#include "util/text.h"

namespace gpuclk::control {
namespace {

bool is_default_word(const std::string& s) { return s == "default" || s == "reset"; }

std::optional<unsigned> parse_mhz(std::string_view text) {
  if (text.size() > 3 && text.substr(text.size() - 3) == "mhz") text.remove_suffix(3);
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<ClockBound> parse_bound(std::string_view text) {
  if (text == "tdp" || text == "base") return ClockBound::tdp();
  if (text == "unlimited" || text == "max") return ClockBound::unlimited();
  if (auto mhz = parse_mhz(text)) return ClockBound::megahertz(*mhz);
  return std::nullopt;
}

}  // namespace

bool Request::has(Setting s) const {
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
      return power_limit_watts.has_value();
  }
  return false;
}

bool Request::empty() const {
  return std::none_of(kWriteOrder.begin(), kWriteOrder.end(), [&](Setting s) { return has(s); });
}

void Request::merge(const Request& over) {
  if (over.persistence_mode) persistence_mode = over.persistence_mode;
  if (over.application_clocks) application_clocks = over.application_clocks;
  if (over.locked_gpu_clocks) locked_gpu_clocks = over.locked_gpu_clocks;
  if (over.locked_memory_clocks) locked_memory_clocks = over.locked_memory_clocks;
  if (over.power_limit_watts) power_limit_watts = over.power_limit_watts;
}

bool parse_on_off(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (s == "on" || s == "1" || s == "true" || s == "enabled" || s == "enable") return true;
  if (s == "off" || s == "0" || s == "false" || s == "disabled" || s == "disable") return false;
  throw bad_argument(fmt::format("{}: '{}' is not on or off", option, text), "write on or off");
}

Change<ApplicationClocks> parse_application_clocks(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s)) return Change<ApplicationClocks>::driver_default();
  auto comma = s.find(',');
  std::optional<unsigned> memory, graphics;
  if (comma != std::string::npos) {
    memory = parse_mhz(std::string_view(s).substr(0, comma));
    graphics = parse_mhz(std::string_view(s).substr(comma + 1));
  }
  if (!memory || !graphics) {
    throw bad_argument(fmt::format("{}: '{}' is not MEM,GFX", option, text),
                       "give the memory and the graphics clock in MHz, memory first as nvidia-smi "
                       "-ac takes them (e.g. 2619,1755), or 'default'; `gpuclk clocks` lists the "
                       "supported pairs");
  }
  return Change<ApplicationClocks>::of({*memory, *graphics});
}

Change<ClockLock> parse_clock_lock(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s) || s == "unlocked" || s == "none")
    return Change<ClockLock>::driver_default();
  auto comma = s.find(',');
  auto lo = parse_bound(std::string_view(s).substr(0, comma));
  auto hi = comma == std::string::npos ? lo : parse_bound(std::string_view(s).substr(comma + 1));
  const std::string form =
      "give MIN[,MAX] in MHz (e.g. 1755 or 1410,1755), or the driver's limits: tdp (the base "
      "clock), tdp,unlimited, unlimited,tdp; 'default' unlocks";
  if (!lo || !hi)
    throw bad_argument(fmt::format("{}: '{}' is not a clock range", option, text), form);
  if (lo->symbolic() != hi->symbolic()) {
    throw bad_argument(fmt::format("{}: '{}' mixes MHz and a symbolic limit", option, text),
                       "the driver takes two MHz values or two of tdp/unlimited, not one of each");
  }
  if (!lo->symbolic() && lo->mhz > hi->mhz) {
    throw bad_argument(
        fmt::format("{}: minimum {} MHz is above maximum {} MHz", option, lo->mhz, hi->mhz), form);
  }
  // The driver documents unlimited,unlimited as the same as a reset.
  if (lo->kind == ClockBound::Kind::unlimited && hi->kind == ClockBound::Kind::unlimited) {
    return Change<ClockLock>::driver_default();
  }
  return Change<ClockLock>::of(ClockLock::range(*lo, *hi));
}

Change<double> parse_power_limit(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s)) return Change<double>::driver_default();
  if (!s.empty() && s.back() == 'w') s.pop_back();
  double watts = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), watts);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(watts) ||
      watts <= 0) {
    throw bad_argument(fmt::format("{}: '{}' is not a power in watts", option, text),
                       "give watts (e.g. 600), or 'default'; `gpuclk query --query-gpu="
                       "power.min_limit,power.max_limit` shows the range");
  }
  return Change<double>::of(watts);
}

}  // namespace gpuclk::control
