#include "bench/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/report.h"
#include "gpu/clock_reasons.h"

namespace gpuclk::bench {
namespace {

using gpu::ClockReasons;

double reason_fraction(const WorkloadReport& r, std::uint64_t mask) {
  double f = 0;
  for (const auto& share : r.reasons) {
    if (share.bit & mask) f = std::max(f, share.fraction);
  }
  return f;
}

long mhz(units::Megahertz m) { return std::lround(m.value()); }

// The clock that bounds this workload: the SM clock for arithmetic, the memory clock for copies.
struct DomainClock {
  const char* name;
  std::optional<units::Megahertz> median, max;
};
DomainClock domain_clock(const WorkloadReport& r) {
  const bool memory = r.peak && r.peak->domain == PeakDomain::memory_clock;
  if (memory) {
    return {"memory clock", r.memory_clock ? std::optional(r.memory_clock->median) : std::nullopt,
            r.gpu.max_memory_clock};
  }
  return {"SM clock", r.sm_clock ? std::optional(r.sm_clock->median) : std::nullopt,
          r.gpu.max_sm_clock};
}

// "(median SM clock 1410 of 1980 MHz, 697 W of a 700 W limit)"
std::string clock_and_power(const WorkloadReport& r) {
  std::string text;
  if (r.sm_clock && r.gpu.max_sm_clock) {
    text = fmt::format("median SM clock {} of {} MHz", mhz(r.sm_clock->median),
                       mhz(*r.gpu.max_sm_clock));
  }
  if (r.power_mean && r.gpu.power_limit) {
    text += fmt::format("{}{:.0f} W of a {:.0f} W limit", text.empty() ? "" : ", ",
                        r.power_mean->value(), r.gpu.power_limit->value());
  }
  return text.empty() ? text : " (" + text + ")";
}

void add_limiters(const WorkloadReport& r, const VerdictThresholds& t, std::vector<Verdict>& out) {
  using Kind = Verdict::Kind;
  const double power_cap = reason_fraction(r, ClockReasons::sw_power_cap);
  if (power_cap >= t.limiter) {
    out.push_back({Kind::power_cap,
                   fmt::format("SW power cap {} of the run: the power limit, not the kernel, set "
                               "this ceiling{}",
                               percent_text(power_cap), clock_and_power(r))});
  }
  const double thermal =
      reason_fraction(r, ClockReasons::sw_thermal_slowdown | ClockReasons::hw_thermal_slowdown);
  if (thermal >= t.thermal) {
    std::string hot = r.temperature_max
                          ? fmt::format(" (up to {:.0f} °C)", r.temperature_max->value())
                          : std::string();
    out.push_back({Kind::thermal,
                   fmt::format("thermal slowdown {} of the run{}: cooling, not the kernel, set "
                               "this ceiling",
                               percent_text(thermal), hot)});
  }
  const double slowdown = reason_fraction(r, ClockReasons::hw_slowdown);
  if (slowdown >= t.limiter) {
    out.push_back({Kind::hw_slowdown,
                   fmt::format("HW slowdown {} of the run: the board cut the clock (overheating, "
                               "power brake or power supply), not the kernel",
                               percent_text(slowdown))});
  }
  const double brake = reason_fraction(r, ClockReasons::hw_power_brake_slowdown);
  if (brake >= t.limiter) {
    out.push_back({Kind::power_brake,
                   fmt::format("HW power brake {} of the run: the system's power brake, not the "
                               "kernel, set this ceiling",
                               percent_text(brake))});
  }
  // The application-clocks bit is also set when the setting equals the max: only a setting
  // below max explains anything.
  const double app = reason_fraction(r, ClockReasons::applications_clocks_setting);
  const bool below_max = r.sm_clock && r.gpu.max_sm_clock &&
                         r.sm_clock->median.value() < t.full_clock * r.gpu.max_sm_clock->value();
  if (app >= t.limiter && below_max) {
    out.push_back({Kind::app_clocks,
                   fmt::format("application clocks setting {} of the run: the clock setting, not "
                               "the kernel, set this ceiling{}; gpuclk reset --app-clocks lifts it",
                               percent_text(app), clock_and_power(r))});
  }
  const double sync = reason_fraction(r, ClockReasons::sync_boost);
  if (sync >= t.limiter) {
    out.push_back(
        {Kind::sync_boost, fmt::format("sync boost {} of the run: held to the slowest GPU of its "
                                       "sync-boost group",
                                       percent_text(sync))});
  }
}

void add_clock_verdict(const WorkloadReport& r, const VerdictThresholds& t,
                       std::vector<Verdict>& out) {
  const DomainClock clock = domain_clock(r);
  if (!clock.median || !clock.max || clock.max->value() <= 0) return;
  if (clock.median->value() >= t.full_clock * clock.max->value()) {
    const bool memory = r.peak && r.peak->domain == PeakDomain::memory_clock;
    std::string reached = "the gap to the peak";
    if (r.efficiency_at_max_clock) {
      reached =
          fmt::format("{} {} of the {}peak, so the gap", memory ? "it moved" : "the kernel reached",
                      percent_text(*r.efficiency_at_max_clock), memory ? "DRAM " : "");
    }
    out.push_back({Verdict::Kind::full_clock,
                   fmt::format("full {} all run ({} of {} MHz): {} is the {}, not the clock's",
                               clock.name, mhz(*clock.median), mhz(*clock.max), reached,
                               memory ? "kernel's and the memory system's" : "kernel's")});
  } else {
    out.push_back({Verdict::Kind::clock_unexplained,
                   fmt::format("median {} {} of {} MHz with no clock event reason most of the run: "
                               "a locked clock or a clock setting (gpuclk clocks shows them)",
                               clock.name, mhz(*clock.median), mhz(*clock.max))});
  }
}

void add_gap_split(const WorkloadReport& r, std::vector<Verdict>& out) {
  if (!r.gap || !r.efficiency_at_max_clock || !r.efficiency_at_observed_clock) return;
  const double gap = 1 - *r.efficiency_at_max_clock;
  if (gap <= 0) return;
  // The kernel's points are what is left of the rounded gap, so the two add up as printed.
  const long gap_points = std::lround(gap * 100);
  const long clock_points = std::min(gap_points, std::lround(r.gap->clock * 100));
  if (clock_points == 0) return;  // all the kernel's: the clock verdict said so
  out.push_back({Verdict::Kind::gap_split,
                 fmt::format("of the {} gap to the max-clock peak, {} points are the clock and {} "
                             "the kernel ({} of the peak at the clock it had)",
                             percent_text(gap), clock_points, gap_points - clock_points,
                             percent_text(*r.efficiency_at_observed_clock))});
}

}  // namespace

std::string percent_text(double fraction) { return fmt::format("{:.0f} %", fraction * 100); }

std::vector<Verdict> explain(const WorkloadReport& r, const VerdictThresholds& t) {
  std::vector<Verdict> out;
  if (r.verification.checked && !r.verification.passed) {
    out.push_back(
        {Verdict::Kind::check_failed,
         fmt::format("result check FAILED: {} of {} sampled elements outside the bound "
                     "(max error {:.3g}): do not trust this rate",
                     r.verification.failures, r.verification.samples, r.verification.max_error)});
  }
  if (!r.has_telemetry) {
    out.push_back({Verdict::Kind::no_telemetry,
                   "no telemetry over the run: efficiency is against the max-clock peak only"});
    return out;
  }
  const std::size_t before = out.size();
  add_limiters(r, t, out);
  if (out.size() == before) add_clock_verdict(r, t, out);
  add_gap_split(r, out);
  if (r.rate.count > 1 && r.rate.spread > t.spread) {
    out.push_back({Verdict::Kind::spread,
                   fmt::format("repetitions varied by {} (min to max): clocks or power moved "
                               "during the run",
                               percent_text(r.rate.spread))});
  }
  if (out.empty()) {
    out.push_back(
        {Verdict::Kind::clock_unexplained,
         "no clock readings over the run: efficiency is against the max-clock peak only"});
  }
  return out;
}

}  // namespace gpuclk::bench
