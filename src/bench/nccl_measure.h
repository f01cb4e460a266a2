// Runs bench nccl with the telemetry sampler alongside (the one bench gemm and stat use, NVLink
// data counters included) and summarizes, on every GPU, each operation's run and the pairs'.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "bench/nccl.h"
#include "bench/nccl_report.h"
#include "telemetry/source.h"
#include "util/clock.h"

namespace gpuclk::bench::nccl {

struct Measured {
  RunResult run;
  std::vector<std::vector<GpuTelemetry>> telemetry;  // per operation, per rank's GPU
  std::vector<GpuTelemetry> pairs_telemetry;         // per rank's GPU over every pair
};

// The CUDA side, replaceable in tests: bench::nccl::run with the library and ordinals bound.
using Runner = std::function<RunResult(const RunOptions&)>;

// `sources[i]` reads rank i's GPU, NVML index `gpus[i]`; samples every `interval` (slow fields,
// NVLink counters among them, every 500 ms).
Measured measure(const Runner& runner, const RunOptions& options,
                 std::vector<std::unique_ptr<telemetry::GpuSource>> sources,
                 const std::vector<unsigned>& gpus, const Clock& clock,
                 telemetry::Duration interval);

// The fields bench nccl samples: the standard set and the NVLinks' state and data counters.
telemetry::FieldSet sampled_fields();

}  // namespace gpuclk::bench::nccl
