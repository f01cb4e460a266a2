#include "bench/plan.h"

#include <algorithm>
#include <cmath>

namespace gpuclk::bench {

namespace {
// Caps that keep a degenerate input (a 0 s launch, a window of days) from planning forever.
constexpr double kMinLaunchSeconds = 1e-6;
constexpr double kMaxLaunchesPerRepetition = 1e6;
constexpr double kMaxRepetitions = 1e6;
}  // namespace

MeasurementPlan plan_measurement(double seconds_per_launch, double window_seconds,
                                 double repetition_seconds, int min_repetitions) {
  if (!(seconds_per_launch >= kMinLaunchSeconds)) seconds_per_launch = kMinLaunchSeconds;
  if (!(window_seconds > 0)) window_seconds = 0;
  if (!(repetition_seconds > 0)) repetition_seconds = seconds_per_launch;
  MeasurementPlan plan;
  // Round to nearest: a repetition is "about" repetition_seconds, never zero launches.
  const double launches = std::round(repetition_seconds / seconds_per_launch);
  plan.launches_per_repetition = int(std::clamp(launches, 1.0, kMaxLaunchesPerRepetition));
  const double repetition = plan.launches_per_repetition * seconds_per_launch;
  const double repetitions = std::round(window_seconds / repetition);
  plan.repetitions = int(std::clamp(repetitions, double(std::max(min_repetitions, 1)),
                                    std::max(kMaxRepetitions, double(min_repetitions))));
  return plan;
}

}  // namespace gpuclk::bench
