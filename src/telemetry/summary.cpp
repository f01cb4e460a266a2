#include "telemetry/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuclk::telemetry {
namespace {

double seconds_between(TimePoint a, TimePoint b) {
  return std::chrono::duration<double>(b - a).count();
}

TimePoint midpoint(TimePoint a, TimePoint b) { return a + (b - a) / 2; }

template <class T>
void keep_max(std::optional<T>& max, const std::optional<T>& v) {
  if (v && (!max || *v > *max)) max = v;
}

// Δcounter / Δt between the first and last reads, clamped to 0..1 (violation counters in ns).
template <class Read>
std::optional<Ratio> counter_fraction(const std::optional<Read>& first,
                                      const std::optional<Read>& last) {
  if (!first || !last) return std::nullopt;
  double dt = seconds_between(first->time, last->time);
  if (dt <= 0) return std::nullopt;
  double f = (last->value - first->value) * 1e-9 / dt;
  return Ratio(std::clamp(f, 0.0, 1.0));
}

}  // namespace

std::string_view to_string(EnergySource source) {
  return source == EnergySource::counter ? "energy counter" : "integrated power";
}

std::optional<Ratio> Summary::reason_fraction(std::uint64_t mask) const {
  if (reason_seconds <= 0) return std::nullopt;
  double active = 0;
  for (const auto& [bits, s] : reason_seconds_by_bits) {
    if (bits & mask) active += s;
  }
  return Ratio(active / reason_seconds);
}

std::optional<Ratio> Summary::idle_fraction() const {
  if (!gpu_utilization) return std::nullopt;
  return Ratio(std::clamp(1.0 - gpu_utilization->value(), 0.0, 1.0));
}

void SummaryBuilder::Histogram::add(double mhz, double s) {
  seconds_by_mhz[std::lround(mhz)] += s;
  seconds += s;
  weighted_sum += mhz * s;
}

std::optional<ClockStatistics> SummaryBuilder::Histogram::statistics() const {
  if (seconds <= 0 || seconds_by_mhz.empty()) return std::nullopt;
  auto quantile = [&](double q) {
    // Smallest clock at or below which a fraction q of the time was spent.
    double target = q * seconds * (1 - 1e-12), cumulative = 0;
    for (const auto& [mhz, s] : seconds_by_mhz) {
      cumulative += s;
      if (cumulative >= target) return Megahertz(double(mhz));
    }
    return Megahertz(double(seconds_by_mhz.rbegin()->first));
  };
  ClockStatistics c;
  c.p5 = quantile(0.05);
  c.median = quantile(0.5);
  c.p95 = quantile(0.95);
  c.mean = Megahertz(weighted_sum / seconds);
  c.min = Megahertz(double(seconds_by_mhz.begin()->first));
  c.max = Megahertz(double(seconds_by_mhz.rbegin()->first));
  return c;
}

void SummaryBuilder::add(const FastSample& s) {
  if (lost_at_) return;
  ++fast_samples_;
  if (pending_) close_pending(std::max(pending_from_, midpoint(pending_->time, s.time)));
  pending_ = s;
  keep_max(power_peak_, s.power);
  keep_max(temperature_max_, s.gpu_temperature);
  keep_max(memory_temperature_max_, s.memory_temperature);
}

// The pending sample held from pending_from_ to `until`.
void SummaryBuilder::close_pending(TimePoint until) {
  const FastSample& s = *pending_;
  const double w = seconds_between(pending_from_, until);
  pending_from_ = until;
  if (w <= 0) return;
  if (s.power) {
    power_seconds_ += w;
    power_joules_ += s.power->value() * w;
  }
  if (s.memory_power) {
    memory_power_seconds_ += w;
    memory_power_joules_ += s.memory_power->value() * w;
  }
  if (s.sm_clock) sm_clock_.add(s.sm_clock->value(), w);
  if (s.memory_clock) memory_clock_.add(s.memory_clock->value(), w);
  if (s.clock_reasons) {
    reason_seconds_by_bits_[s.clock_reasons->bits()] += w;
    reason_seconds_ += w;
  }
  if (s.gpu_utilization) {
    utilization_seconds_ += w;
    gpu_busy_seconds_ += s.gpu_utilization->value() * w;
    memory_busy_seconds_ += s.memory_utilization.value_or(Ratio(0)).value() * w;
  }
}

double SummaryBuilder::power_integral_at(TimePoint t) const {
  double joules = power_joules_;
  if (pending_ && pending_->power)
    joules += pending_->power->value() * seconds_between(pending_from_, t);
  return joules;
}

void SummaryBuilder::add(const SlowSample& s) {
  // A counter read before the window would count the energy and held-back time from then on: the
  // service's stream hands `gpuclk stat` reads up to a slow interval (1 s) older than its start.
  if (lost_at_ || s.time < start_) return;
  ++slow_samples_;
  auto record = [&](std::optional<CounterRead>& first, std::optional<CounterRead>& last,
                    double value) {
    CounterRead read{s.time, value, power_integral_at(s.time)};
    if (!first) first = read;
    last = read;
  };
  if (s.energy) {
    // A counter that went backwards (driver reload) restarts the counted span.
    if (last_energy_ && s.energy->value() < last_energy_->value) first_energy_.reset();
    record(first_energy_, last_energy_, s.energy->value());
  }
  if (s.power_violation) {
    record(first_power_violation_, last_power_violation_, double(s.power_violation->count()));
  }
  if (s.thermal_violation) {
    record(first_thermal_violation_, last_thermal_violation_, double(s.thermal_violation->count()));
  }
  if (s.gpm) {
    const double w = seconds_between(std::max(s.gpm_window_start, start_), s.time);
    if (w > 0) {
      gpm_graphics_.add(s.gpm->graphics, w);
      gpm_sm_.add(s.gpm->sm, w);
      gpm_occupancy_.add(s.gpm->sm_occupancy, w);
      gpm_tensor_.add(s.gpm->tensor, w);
      gpm_dram_.add(s.gpm->dram, w);
      gpm_fp64_.add(s.gpm->fp64, w);
      gpm_fp32_.add(s.gpm->fp32, w);
      gpm_fp16_.add(s.gpm->fp16, w);
    }
  }
}

void SummaryBuilder::mark_lost(TimePoint when) {
  if (!lost_at_) lost_at_ = when;
}

Summary SummaryBuilder::finish(TimePoint end) const {
  SummaryBuilder b = *this;
  if (lost_at_) end = std::min(end, *lost_at_);
  end = std::max(end, start_);
  if (b.pending_) b.close_pending(std::max(b.pending_from_, end));

  Summary out;
  out.from = start_;
  out.to = end;
  out.lost = lost_at_.has_value();
  out.fast_samples = b.fast_samples_;
  out.slow_samples = b.slow_samples_;
  const double seconds = out.seconds();

  const double integrated = b.power_joules_;
  if (first_energy_ && last_energy_ && last_energy_->time > first_energy_->time) {
    // Counter between its first and last reads; power readings cover the edges.
    double before = first_energy_->power_integral;
    double after = integrated - last_energy_->power_integral;
    out.energy = Joules(last_energy_->value - first_energy_->value + std::max(before, 0.0) +
                        std::max(after, 0.0));
    out.energy_source = EnergySource::counter;
  } else if (b.power_seconds_ > 0) {
    out.energy = Joules(integrated);
    out.energy_source = EnergySource::integrated_power;
  }
  if (out.energy && seconds > 0) out.power_mean = Watts(out.energy->value() / seconds);
  out.power_peak = power_peak_;
  if (b.memory_power_seconds_ > 0) {
    out.memory_power_mean = Watts(b.memory_power_joules_ / b.memory_power_seconds_);
    // Read for part of the window only (a GPU that stopped answering it): its mean stands for
    // the rest, as the power readings' integral does for the energy counter's edges.
    if (seconds > 0) out.memory_energy = Joules(out.memory_power_mean->value() * seconds);
  }
  if (out.energy && seconds < kShortestEnergyWindowSeconds) {
    // A counter that refreshes every ~0.1 s gives 0 J for a 50 ms run, or 10 % too much for a
    // 0.9 s one; 1 s power averages say little about a shorter window either.
    out.energy_note = fmt::format(
        "the window ({:.2f} s) is shorter than the counters resolve ({:.0f} s: power is a 1 s "
        "average, the energy counter refreshes every ~0.1 s): no energy or mean power",
        seconds, kShortestEnergyWindowSeconds);
    out.energy.reset();
    out.power_mean.reset();
    out.memory_energy.reset();
    out.memory_power_mean.reset();
  } else if (out.power_mean && out.power_peak && *out.power_mean > *out.power_peak &&
             out.energy_source == EnergySource::counter && b.power_seconds_ > 0) {
    // The counter is right, but the peak is the highest 1 s average: a mean above it reads as
    // an error. The power readings' integral keeps the two consistent.
    out.energy_note = fmt::format(
        "the energy counter's mean ({:.1f} W) is above the highest power reading (a 1 s "
        "average): energy integrated from power readings instead",
        out.power_mean->value());
    out.energy = Joules(integrated);
    out.energy_source = EnergySource::integrated_power;
    out.power_mean = Watts(integrated / seconds);
  }

  out.sm_clock = b.sm_clock_.statistics();
  out.memory_clock = b.memory_clock_.statistics();
  out.reason_seconds_by_bits = b.reason_seconds_by_bits_;
  out.reason_seconds = b.reason_seconds_;
  if (b.reason_seconds_ > 0) {
    for (int bit = 0; bit < 64; ++bit) {
      const std::uint64_t mask = std::uint64_t{1} << bit;
      auto f = out.reason_fraction(mask);
      if (f && f->value() > 0) out.clock_reasons.push_back({mask, *f});
    }
  }
  if (b.utilization_seconds_ > 0) {
    out.gpu_utilization = Ratio(b.gpu_busy_seconds_ / b.utilization_seconds_);
    out.memory_utilization = Ratio(b.memory_busy_seconds_ / b.utilization_seconds_);
  }
  if (gpm_sm_.seconds > 0 || gpm_tensor_.seconds > 0 || gpm_dram_.seconds > 0) {
    out.gpm = GpmActivity{gpm_graphics_.value(), gpm_sm_.value(),   gpm_occupancy_.value(),
                          gpm_tensor_.value(),   gpm_dram_.value(), gpm_fp64_.value(),
                          gpm_fp32_.value(),     gpm_fp16_.value()};
  }
  out.temperature_max = temperature_max_;
  out.memory_temperature_max = memory_temperature_max_;
  out.power_violation = counter_fraction(first_power_violation_, last_power_violation_);
  out.thermal_violation = counter_fraction(first_thermal_violation_, last_thermal_violation_);
  return out;
}

}  // namespace gpuclk::telemetry
