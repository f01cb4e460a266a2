// Runs bench workloads with the telemetry sampler alongside and turns each result into a
// WorkloadReport over its own measured window. The sampler starts before the first workload and
// stops after the last; summaries are taken after the stop, so every window has its closing
// samples. Workloads run one GPU at a time, or on all GPUs at once (concurrent).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "bench/report.h"
#include "bench/report_view.h"
#include "bench/workload.h"
#include "telemetry/sampler.h"
#include "telemetry/source.h"
#include "util/clock.h"

namespace gpuclk::bench {

// A GPU to run on: what NVML says about it and its CUDA ordinal.
struct Target {
  GpuFacts facts;
  int cuda_ordinal = -1;
};

struct MeasureOptions {
  RunOptions run;  // its on_repetition / on_phase are called as given
  bool concurrent = false;
  telemetry::Duration sample_interval = std::chrono::milliseconds(50);
  // Around each bench::run (one ordinal) or bench::run_concurrent (all of them).
  std::function<void(const WorkloadSpec&, std::span<const int> ordinals)> on_workload_start;
  std::function<void()> on_workload_end;
};

// The CUDA entry points, replaceable in tests.
struct Runner {
  std::function<Result(const WorkloadSpec&, int, const RunOptions&)> run = bench::run;
  std::function<std::vector<DeviceOutcome>(const WorkloadSpec&, std::span<const int>,
                                           const RunOptions&)>
      run_concurrent = bench::run_concurrent;
};

struct Measurement {
  std::vector<WorkloadReport> reports;  // spec-major, then target order
  std::vector<RunError> errors;         // workloads that failed on a GPU; the rest went on
  telemetry::SamplerOptions sampling;
};

// `sources[i]` reads `targets[i]` (telemetry::device_sources). Errors other than gpuclk::Error
// propagate; a gpuclk::Error from one GPU's run becomes a RunError.
Measurement measure(std::span<const WorkloadSpec> specs, std::span<const Target> targets,
                    std::vector<std::unique_ptr<telemetry::GpuSource>> sources, const Clock& clock,
                    const MeasureOptions& options, const Runner& runner = {});

// Expected wall time of `measure` (s): warm-up and window per run, plus preparation.
double expected_seconds(std::size_t specs, std::size_t targets, const MeasureOptions& options);

}  // namespace gpuclk::bench
