// Plain-language verdicts on one bench result: what set its ceiling ("SW power cap 98 % of the
// run: the power limit, not the kernel, set this ceiling") and how the gap to the peak splits
// between the clock and the kernel. Every number in a verdict comes from the WorkloadReport.
#pragma once

#include <string>
#include <vector>

namespace gpuclk::bench {

struct WorkloadReport;

struct Verdict {
  enum class Kind {
    check_failed,       // the result check failed: the rate is not to be trusted
    power_cap,          // SW power cap held the clock down
    thermal,            // SW/HW thermal slowdown
    hw_slowdown,        // HW slowdown (clock halved or worse)
    power_brake,        // external power brake
    app_clocks,         // the application clock setting held the clock below max
    sync_boost,         // held to the slowest GPU of a sync-boost group
    clock_unexplained,  // below max clock with no reason reported most of the run
    full_clock,         // ran at full clock: the gap is the kernel's
    gap_split,          // the gap to the max-clock peak, split into clock and kernel
    spread,             // repetitions disagree
    no_telemetry,       // no samples over the window
  };
  Kind kind;
  std::string text;
};

// Fractions of the run (0..1) and ratios above or below which a verdict is given.
struct VerdictThresholds {
  double limiter = 0.2;      // power cap, app clocks, sync boost, power brake, HW slowdown
  double thermal = 0.05;     // thermal slowdowns matter sooner
  double full_clock = 0.97;  // median clock at least this share of max: the clock is not why
  double spread = 0.05;      // (max − min) / median of the repetition rates
};

// Verdicts for `report`, most important first; never empty.
std::vector<Verdict> explain(const WorkloadReport& report,
                             const VerdictThresholds& thresholds = {});

// "98 %": a 0..1 fraction as whole percent, as verdicts and docs write it.
std::string percent_text(double fraction);

}  // namespace gpuclk::bench
