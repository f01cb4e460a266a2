// Summary statistics of one GPU over a time window, and the builder that computes them from
// samples in time order (incrementally: the sampler keeps one per GPU for the whole run, and
// builds fresh ones over ring-buffer windows).
//
// Time weighting: each fast sample stands for the time from the midpoint with its predecessor to
// the midpoint with its successor (the window's ends for the first and last), so a late or
// missed tick does not skew fractions. Energy comes from the energy counter where the GPU has
// one (the two counter reads nearest the ends, with the few ms beyond them integrated from
// power), else from integrated power readings; Summary::energy_source says which.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/sample.h"

namespace gpuclk::telemetry {

enum class EnergySource { counter, integrated_power };
// The shortest window whose energy the counters resolve: the power reading is a 1 s average on
// Hopper and the energy counter refreshes about every 0.1 s (10 % of a 1 s window). Shorter
// windows get no energy and no mean power (Summary::energy_note says why).
inline constexpr double kShortestEnergyWindowSeconds = 1.0;
std::string_view to_string(EnergySource source);  // "energy counter", "integrated power"

struct ClockStatistics {
  Megahertz p5, median, p95, mean, min, max;  // time-weighted
};

struct ReasonTime {
  std::uint64_t bit;  // one gpu::ClockReasons bit
  Ratio fraction;     // of the time reasons were known
};

struct Summary {
  TimePoint from{}, to{};  // `to` is when the GPU was lost, if it was
  double seconds() const { return std::chrono::duration<double>(to - from).count(); }
  std::size_t fast_samples = 0, slow_samples = 0;

  std::optional<Joules> energy;
  EnergySource energy_source = EnergySource::integrated_power;
  std::optional<Watts> power_mean;  // energy / time where energy is known; never above the peak
  std::optional<Watts> power_peak;  // highest single reading
  // The memory's share (FastSample::memory_power) integrated over the time it was read, and its
  // mean: what a lower SM clock cannot save. Absent where the board does not report it, and
  // where energy is (a window too short).
  std::optional<Joules> memory_energy;
  std::optional<Watts> memory_power_mean;
  // Why energy and mean power are missing or integrated from power readings although the GPU has
  // an energy counter ("" when neither): a window shorter than kShortestEnergyWindow, or a
  // counter mean above the peak reading.
  std::string energy_note;
  std::optional<ClockStatistics> sm_clock, memory_clock;
  std::vector<ReasonTime> clock_reasons;  // each reason seen active, in bit order
  std::optional<Ratio> gpu_utilization, memory_utilization;  // means
  std::optional<GpmActivity> gpm;                            // means over GPM windows
  std::optional<Celsius> temperature_max, memory_temperature_max;
  // From the driver's violation counters (exact, not sampled); fraction of the window.
  std::optional<Ratio> power_violation, thermal_violation;
  bool lost = false;

  // Fraction of the time any reason in `mask` (gpu::ClockReasons bits) was active; nullopt when
  // reasons were never read.
  std::optional<Ratio> reason_fraction(std::uint64_t mask) const;
  // Fraction of the time no kernel ran: 1 - mean GPU utilization.
  std::optional<Ratio> idle_fraction() const;

  // Time per distinct reason bit set (for reason_fraction of any mask).
  std::map<std::uint64_t, double> reason_seconds_by_bits;
  double reason_seconds = 0;
};

class SummaryBuilder {
 public:
  explicit SummaryBuilder(TimePoint start) : start_(start), pending_from_(start) {}

  // Samples must come in time order per kind; fast and slow may interleave loosely (a slow
  // sample up to a tick early or late is fine).
  void add(const FastSample& sample);
  void add(const SlowSample& sample);
  // The GPU was lost at `when`: the window ends there.
  void mark_lost(TimePoint when);

  // The summary over [start, end] (end clipped to the loss). Does not change the builder.
  Summary finish(TimePoint end) const;

 private:
  struct CounterRead {
    TimePoint time;
    double value;           // J, or ns for violation counters
    double power_integral;  // J integrated from power readings up to `time`
  };
  struct Histogram {
    std::map<long, double> seconds_by_mhz;
    double seconds = 0;
    double weighted_sum = 0;
    void add(double mhz, double seconds);
    std::optional<ClockStatistics> statistics() const;
  };

  void close_pending(TimePoint until);
  double power_integral_at(TimePoint t) const;

  TimePoint start_;
  std::optional<TimePoint> lost_at_;
  std::optional<FastSample> pending_;  // the last fast sample, its coverage not closed yet
  TimePoint pending_from_;
  std::size_t fast_samples_ = 0, slow_samples_ = 0;

  // Closed coverage.
  double power_seconds_ = 0, power_joules_ = 0;
  double memory_power_seconds_ = 0, memory_power_joules_ = 0;
  std::optional<Watts> power_peak_;
  Histogram sm_clock_, memory_clock_;
  std::map<std::uint64_t, double> reason_seconds_by_bits_;
  double reason_seconds_ = 0;
  double utilization_seconds_ = 0, gpu_busy_seconds_ = 0, memory_busy_seconds_ = 0;
  std::optional<Celsius> temperature_max_, memory_temperature_max_;

  // Slow tier.
  std::optional<CounterRead> first_energy_, last_energy_;
  std::optional<CounterRead> first_power_violation_, last_power_violation_;
  std::optional<CounterRead> first_thermal_violation_, last_thermal_violation_;
  struct Mean {
    double seconds = 0, sum = 0;
    void add(const std::optional<Ratio>& v, double w) {
      if (v) seconds += w, sum += v->value() * w;
    }
    std::optional<Ratio> value() const {
      return seconds > 0 ? std::optional<Ratio>(Ratio(sum / seconds)) : std::nullopt;
    }
  };
  Mean gpm_graphics_, gpm_sm_, gpm_occupancy_, gpm_tensor_, gpm_dram_, gpm_fp64_, gpm_fp32_,
      gpm_fp16_;
};

}  // namespace gpuclk::telemetry
