// Jobs injected on demand (gpuclk_sim_job_start): an amount of work of one named kind that
// takes over its GPU from the scenario's workload until it is done, stopped or out of time.
// The scenario's workload pauses meanwhile and resumes where it was. Up to kMaxJobs run on one
// GPU at once, time-sliced as CUDA shares a GPU between processes without MPS: each running job
// gets an equal share of every tick. Plain data: it lives in GpuState, so every process sharing
// the state file sees the same jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "dtype.h"
#include "workload.h"

namespace gpuclk::sim {

// A kind of job: what one unit of its work is and how it loads the GPU (roofline parameters).
struct JobKind {
  std::string_view name;  // "gemm-bf16", "mem-copy", …
  PhaseKind phase_kind;   // compute (amount in FLOP) or memory (amount in bytes of DRAM traffic)
  DataType dtype;
  double intensity;       // FLOP per DRAM byte (compute: DRAM limit; memory: FLOPs done per byte)
  double sm_occupancy;    // GPM SM occupancy while it runs
  std::string_view unit;  // "FLOP" or "B"
};

// Every kind, in a fixed order (the index is stored in the state).
std::span<const JobKind> job_kinds();
std::optional<std::uint32_t> job_kind_index(std::string_view name);

// Jobs on one GPU at once (each its own process).
inline constexpr int kMaxJobs = 4;
// A job's SM utilization samples (what nvmlDeviceGetProcessUtilization returns): one per period,
// the last kJobSamples kept (8 s; the driver samples every 1/6 to 1 s, by product).
inline constexpr double kJobSamplePeriodS = 0.25;
inline constexpr int kJobSamples = 32;

// One process's SM utilization as the driver samples it: the share of each kJobSamplePeriodS its
// kernels ran, the last kJobSamples periods (a ring; end_s == 0: empty).
struct UtilizationSamples {
  double period_start_s = 0;  // the open period's start
  double period_busy_s = 0;   // busy seconds in it so far
  double end_s[kJobSamples] = {};
  double sm[kJobSamples] = {};  // fraction 0..1 of that period
  std::uint32_t pos = 0;
};

// Adds `busy_s` of kernel time to the open period and closes every period that ended by `end_s`;
// `last`: the process ends at `end_s`, so its part-period is closed too.
void add_utilization(UtilizationSamples& s, double busy_s, double end_s, bool last);

struct InjectedJob {
  std::uint64_t id = 0;  // 0: no job has run on this GPU since power-on
  std::uint32_t running = 0;
  std::uint32_t completed = 0;  // 1 once all its work was done (not stopped, not timed out)
  std::uint32_t kind = 0;       // index into job_kinds()
  std::uint32_t pid = 0;        // the process NVML lists while it runs
  double amount = 0;            // FLOPs or bytes; 0: no fixed amount (until stopped or deadline)
  double done = 0;              // FLOPs or bytes done so far
  double start_s = 0;           // simulated time it started
  double end_s = 0;             // simulated time it ended (valid once running == 0)
  double deadline_s = 0;        // it ends by itself at this simulated time; 0: no deadline
  // Truth for attribution: the GPU's energy its time slices drew (each tick's energy split over
  // the jobs by time share × the board power of each job's own activity) and the seconds its
  // kernels ran.
  double energy_j = 0;
  double busy_s = 0;
  UtilizationSamples samples;
};

// The workload phase a job runs as.
Phase job_phase(const InjectedJob& job);

}  // namespace gpuclk::sim
