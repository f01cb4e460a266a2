// Warm-up and the measured window of one workload on one device. Internal to src/bench.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "bench/detail/kernel.h"
#include "bench/plan.h"

namespace gpuclk::bench::detail {

// Launches `kernel` for at least `seconds` (one launch when 0) in chunks of about
// `chunk_seconds`, synchronizing after each; returns the seconds per launch of the last chunk.
double warm_up(Kernel& kernel, cudaStream_t stream, double seconds, double chunk_seconds);

struct TimedWindow {
  std::vector<Repetition> repetitions;
  std::chrono::steady_clock::time_point start, end;  // host steady clock around the window
  double seconds = 0;                                // GPU time from first launch to last
};

// Runs plan.repetitions repetitions of plan.launches_per_repetition launches back to back (the
// next repetitions are queued before the host waits on one, so the GPU never idles between them),
// calling on_repetition after each. `device` only labels the progress reports.
TimedWindow measure(Kernel& kernel, cudaStream_t stream, const MeasurementPlan& plan, int device,
                    const std::function<void(const Progress&)>& on_repetition);

}  // namespace gpuclk::bench::detail
