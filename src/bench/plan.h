// How a measurement is cut into repetitions: pure arithmetic, so it is unit-tested.
#pragma once

namespace gpuclk::bench {

struct MeasurementPlan {
  int launches_per_repetition = 1;  // ≥ 1
  int repetitions = 1;              // ≥ 1
};

// seconds_per_launch: measured at the end of warm-up (s, > 0; anything else counts as 1 µs).
// window_seconds: target length of the measured window (s). repetition_seconds: target length of
// one repetition (s); a launch longer than that makes a repetition of one launch.
// min_repetitions: floor on the count (≥ 1), so a median exists even for short windows.
MeasurementPlan plan_measurement(double seconds_per_launch, double window_seconds,
                                 double repetition_seconds, int min_repetitions);

}  // namespace gpuclk::bench
