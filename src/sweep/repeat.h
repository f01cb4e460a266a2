// Several runs (a command run N times) or measured windows (a workload measured N times) per
// point of a sweep: how their own rates make the point's rate and its spread.
#pragma once

#include <optional>
#include <vector>

namespace gpuclk::sweep {

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

// (max − min) / `reference` over `rates`: how far the runs of one point scatter, as a fraction
// of its rate. nullopt with fewer than two rates or a reference ≤ 0.
std::optional<double> relative_spread(const std::vector<double>& rates, double reference);

// A timed piece of work inside a measured window (a bench repetition): when it started from the
// window's start (s), how long it ran (s), and how much it did (in the workload's unit).
struct TimedWork {
  double start_seconds = 0;
  double seconds = 0;
  double work = 0;
};

// The rates of `windows` consecutive windows of `window_seconds` each: a piece counts in the
// window its start falls into (pieces past the last window count in the last). A window no
// piece started in has no rate and is left out, so the result may hold fewer than `windows`.
std::vector<double> window_rates(const std::vector<TimedWork>& pieces, unsigned windows,
                                 double window_seconds);

}  // namespace gpuclk::sweep
