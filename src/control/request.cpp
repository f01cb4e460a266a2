#include "control/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::control {
namespace {

bool is_default_word(const std::string& s) { return s == "default" || s == "reset"; }

// Whole MHz; no clock of any GPU is near 100 GHz, so more is a typo, not a request.
std::optional<unsigned> parse_mhz(std::string_view text) {
  if (text.size() > 3 && text.substr(text.size() - 3) == "mhz") text.remove_suffix(3);
  auto v = parse::try_unsigned(text, 0, 100'000);
  if (!v) return std::nullopt;
  return static_cast<unsigned>(*v);
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
      return power_limit.has_value();
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
  if (over.power_limit) power_limit = over.power_limit;
}

bool parse_on_off(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (s == "on" || s == "1" || s == "true" || s == "enabled" || s == "enable") return true;
  if (s == "off" || s == "0" || s == "false" || s == "disabled" || s == "disable") return false;
  throw bad_argument(fmt::format("{}: '{}' is not on or off", option, parse::quote(text)),
                     "write on or off");
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
    throw bad_argument(fmt::format("{}: '{}' is not MEM,GFX", option, parse::quote(text)),
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
    throw bad_argument(fmt::format("{}: '{}' is not a clock range", option, parse::quote(text)),
                       form);
  if (lo->symbolic() != hi->symbolic()) {
    throw bad_argument(
        fmt::format("{}: '{}' mixes MHz and a symbolic limit", option, parse::quote(text)),
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

Change<units::Milliwatts> parse_power_limit(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s)) return Change<units::Milliwatts>::driver_default();
  if (!s.empty() && s.back() == 'w') s.pop_back();
  const auto mw = parse::try_fixed(s, 3, std::numeric_limits<std::uint64_t>::max());
  if (!mw || *mw == 0) {
    throw bad_argument(
        fmt::format("{}: '{}' is not a power in watts", option, parse::quote(text)),
        "give watts with at most three decimals (e.g. 600 or 612.5), or 'default'; "
        "`gpuclk query --query-gpu=power.min_limit,power.max_limit` shows the range");
  }
  return Change<units::Milliwatts>::of(units::Milliwatts(*mw));
}

std::string setting_text(const Settings& settings, Setting s) {
  if (!settings.has(s)) return {};
  const auto lock_text = [](const ClockLock& lock) -> std::string {
    if (!lock.locked) return "default";
    return fmt::format("{},{}", describe(lock.min), describe(lock.max));
  };
  switch (s) {
    case Setting::persistence_mode:
      return *settings.persistence_mode ? "on" : "off";
    case Setting::application_clocks:
      return fmt::format("{},{}", settings.application_clocks->memory_mhz,
                         settings.application_clocks->graphics_mhz);
    case Setting::locked_gpu_clocks:
      return lock_text(*settings.locked_gpu_clocks);
    case Setting::locked_memory_clocks:
      return lock_text(*settings.locked_memory_clocks);
    case Setting::power_limit: {
      const auto mw = settings.power_limit_mw->count();
      return mw % 1000 == 0 ? fmt::format("{}", mw / 1000)
                            : fmt::format("{}.{:03}", mw / 1000, mw % 1000);
    }
  }
  return {};
}

}  // namespace gpuclk::control
