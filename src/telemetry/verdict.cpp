#include "telemetry/verdict.h"

#include <fmt/format.h>

#include <cmath>

#include "gpu/clock_reasons.h"

namespace gpuclk::telemetry {
namespace {

using gpu::ClockReasons;

constexpr std::uint64_t kPowerReasons =
    ClockReasons::sw_power_cap | ClockReasons::hw_power_brake_slowdown;
constexpr std::uint64_t kThermalReasons = ClockReasons::sw_thermal_slowdown |
                                          ClockReasons::hw_thermal_slowdown |
                                          ClockReasons::hw_slowdown;

long percent(double fraction) { return std::lround(fraction * 100); }

// "median SM clock 1410 of 1980 MHz", or without "of" when the maximum is unknown.
std::string median_clock(const Summary& s, const GpuInfo& info) {
  if (!s.sm_clock) return "SM clock not read";
  if (!info.max_sm_clock)
    return fmt::format("median SM clock {:.0f} MHz", s.sm_clock->median.value());
  return fmt::format("median SM clock {:.0f} of {:.0f} MHz", s.sm_clock->median.value(),
                     info.max_sm_clock->value());
}

double fraction_of(const Summary& s, std::uint64_t mask) {
  auto f = s.reason_fraction(mask);
  return f ? f->value() : 0.0;
}

}  // namespace

std::vector<Verdict> verdicts(const Summary& s, const GpuInfo& info, const VerdictThresholds& t) {
  using Kind = Verdict::Kind;
  std::vector<Verdict> out;
  if (s.lost) {
    out.push_back(
        {Kind::lost,
         fmt::format("GPU lost after {:.1f} s: the figures cover the time before", s.seconds())});
  }
  if (s.fast_samples == 0) {
    out.push_back({Kind::no_data, "no readings: the run was shorter than one sampling interval"});
    return out;
  }
  const double idle = s.idle_fraction() ? s.idle_fraction()->value() : 0.0;
  if (idle >= t.unused_idle) {
    out.push_back(
        {Kind::unused,
         fmt::format("idle {} % of the time: the command hardly used this GPU", percent(idle))});
    return out;
  }
  const double power = fraction_of(s, kPowerReasons);
  if (power >= t.power_capped) {
    out.push_back({Kind::power_capped, fmt::format("power-capped {} % of the time: {}",
                                                   percent(power), median_clock(s, info))});
  }
  const double thermal = fraction_of(s, kThermalReasons);
  if (thermal >= t.thermal) {
    std::string hottest =
        s.temperature_max ? fmt::format(" (max {:.0f} C)", s.temperature_max->value()) : "";
    out.push_back({Kind::thermal, fmt::format("thermally throttled {} % of the time{}: {}",
                                              percent(thermal), hottest, median_clock(s, info))});
  }
  const double app = fraction_of(s, ClockReasons::applications_clocks_setting);
  if (app >= t.app_clocks) {
    out.push_back(
        {Kind::app_clocks, fmt::format("held by the application clock setting {} % of the time: {} "
                                       "(gpuclk reset restores the default)",
                                       percent(app), median_clock(s, info))});
  }
  if (idle >= t.idle) {
    out.push_back(
        {Kind::idle, fmt::format("idle {} % of the time: the GPU waited on input", percent(idle))});
  }
  if (out.empty() || (out.size() == 1 && out.front().kind == Kind::lost)) {
    const bool full = s.sm_clock && info.max_sm_clock &&
                      s.sm_clock->median.value() >= t.full_clock * info.max_sm_clock->value();
    if (full || !info.max_sm_clock) {
      out.push_back({Kind::full_clock,
                     fmt::format("no limit held the clock down: {}", median_clock(s, info))});
    } else {
      out.push_back({Kind::below_max, fmt::format("{} with no clock event reason to explain it",
                                                  median_clock(s, info))});
    }
  }
  return out;
}

}  // namespace gpuclk::telemetry
