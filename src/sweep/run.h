// Runs a sweep: for each group of GPUs (all at once with `concurrent`, else one GPU after
// another) a baseline at the settings found, then each point — its setting applied (one journaled
// transaction, by the caller's ApplyPoint), the workload run, telemetry sampled over the measured
// window — and the group's settings restored (the caller's Restore) before the next group.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "sweep/plan.h"
#include "sweep/result.h"
#include "sweep/workload.h"
#include "util/clock.h"

namespace gpuclk::sweep {

struct SweepOptions {
  Axis axis = Axis::sm_clock;
  std::vector<double> values;  // checked (plan.h), in the order to run
  bool concurrent = false;
  bool fail_fast = false;  // stop at the first point where the work fails
  bool baseline = true;    // measure the settings found before the sweep first
  std::chrono::milliseconds sample_interval{100};  // Clock time
};

// Applies `value` (MHz or W) on `gpus`; throws Error when it cannot (the sweep stops).
using ApplyPoint = std::function<void(const std::vector<gpu::Device*>& gpus, double value)>;
// Returns `gpus` to the settings found before the sweep.
using Restore = std::function<void(const std::vector<gpu::Device*>& gpus)>;

struct ProgressInfo {
  std::size_t done = 0, total = 0;  // points (a point on k GPUs at once counts once)
  std::string label;                // "GPU 0: 1410 MHz"
  double eta_seconds = -1;          // wall time left; < 0 until known
};

struct SweepRun {
  std::vector<PointResult> points;  // in run order
  bool interrupted = false;         // a signal stopped it
  bool failed_fast = false;         // --fail-fast stopped it
};

SweepRun run_sweep(const std::vector<gpu::Device*>& gpus, Workload& workload,
                   const ApplyPoint& apply, const Restore& restore, const SweepOptions& options,
                   const Clock& clock, const std::function<bool()>& stop,
                   const std::function<void(const ProgressInfo&)>& progress);

// The power readings' 95th percentile (nearest rank) of `watts`; nullopt when empty.
std::optional<double> percentile95(std::vector<double> watts);

}  // namespace gpuclk::sweep
