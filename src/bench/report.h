// The bench report: what a workload achieved on one GPU, against what the architecture allows at
// the clock it had and at its max clock, what that cost in energy, and why the clock was where it
// was. Pure arithmetic over a bench::Result and a telemetry::Summary of its measured window, so it
// is unit-tested on recorded samples (docs/calibration.md).
//
// Rates are in Result's unit (FLOP/s or B/s) throughout; views (report_view.h) pick display units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/verdict.h"
#include "bench/workload.h"
#include "gpu/arch.h"
#include "telemetry/summary.h"

namespace gpuclk::bench {

// What NVML says about the GPU a result ran on (the CUDA side is in Result::device).
struct GpuFacts {
  unsigned index = 0;  // NVML index
  std::string name, uuid, pci_bus_id;
  std::optional<units::Megahertz> max_sm_clock, max_memory_clock;
  std::optional<unsigned> memory_bus_width_bits;
  std::optional<units::Watts> power_limit;  // enforced limit during the run
};

// The architecture table's type for a workload: gemm → its dtype, fma → fp32; nullopt for mem
// (measured against DRAM bandwidth instead).
std::optional<gpu::DataType> peak_data_type(const WorkloadSpec& spec);

enum class PeakDomain { sm_clock, memory_clock };

// Theoretical rate at two clocks of the domain that bounds the workload.
struct Peak {
  PeakDomain domain = PeakDomain::sm_clock;
  units::Megahertz max_clock;                      // NVML's max clock of the domain
  double at_max_clock = 0;                         // FLOP/s or B/s
  std::optional<units::Megahertz> observed_clock;  // median over the window
  std::optional<double> at_observed_clock;
  std::string basis;  // how it was computed: "132 SMs x 4096 FLOP/clock/SM (Hopper bf16)"
};

// Peak for `spec` on a GPU with `sms` SMs of compute capability `cc`; nullopt when the
// architecture or the needed clock / bus width is unknown, or it has no such path.
std::optional<Peak> compute_peak(const WorkloadSpec& spec, gpu::ComputeCapability cc, unsigned sms,
                                 const GpuFacts& gpu, const telemetry::Summary* window);

// The share of the max-clock peak lost to the clock and to the kernel:
//   1 = achieved/peak_max + clock + kernel, clock = 1 − observed/max clock,
//   kernel = observed/max × (1 − achieved/peak_observed).
struct GapSplit {
  double clock = 0;   // fraction of the max-clock peak
  double kernel = 0;  // fraction of the max-clock peak
};

struct ReasonShare {
  std::uint64_t bit = 0;  // gpu::ClockReasons bit
  std::string key;        // "sw_power_cap"
  double fraction = 0;    // of the window's time with reasons known, 0..1
};

struct WorkloadReport {
  GpuFacts gpu;
  int cuda_ordinal = -1;
  std::string workload, variant;
  std::string input;  // what the inputs held (describe_input): "random uniform in [-1, 1)"
  RateUnit unit = RateUnit::flop_per_second;
  RateSummary rate;           // per repetition; rate.median is the headline
  double window_seconds = 0;  // measured window, host clock
  double work_done = 0;       // FLOP or bytes over the window
  Verification verification;
  std::vector<std::pair<std::string, std::string>> details;  // Result::details
  std::vector<Repetition> repetitions;

  std::optional<Peak> peak;
  std::optional<double> efficiency_at_max_clock;       // rate.median / peak.at_max_clock
  std::optional<double> efficiency_at_observed_clock;  // rate.median / peak.at_observed_clock
  std::optional<GapSplit> gap;

  bool has_telemetry = false;  // a summary with samples covered the window
  std::optional<telemetry::ClockStatistics> sm_clock, memory_clock;
  std::optional<units::Watts> power_mean, power_peak;
  std::optional<units::Joules> energy;
  std::optional<double> rate_per_watt;    // Result unit per W (FLOP/J or B/J)
  std::optional<double> joules_per_unit;  // J per FLOP or per byte
  std::vector<ReasonShare> reasons;       // each reason seen active, in bit order
  std::optional<units::Ratio> gpu_utilization;
  std::optional<telemetry::GpmActivity> gpm;
  std::optional<units::Celsius> temperature_max;

  std::vector<Verdict> verdicts;  // most important first; never empty
};

// Builds the report; `window` is the sampler's summary over [window_start, window_end], or
// nullptr when there was no telemetry (then no clock-adjusted peak, power or reasons).
WorkloadReport make_report(const WorkloadSpec& spec, const Result& result, const GpuFacts& gpu,
                           const telemetry::Summary* window);

// Across GPUs, per workload variant: the slowest against the fastest (median rates).
struct AcrossGpus {
  std::string workload, variant;
  std::size_t fastest = 0, slowest = 0;  // positions in the reports given
  double slowest_vs_fastest = 1;         // ratio of median rates, 0..1
  std::string verdict;                   // one line; names clocks when they differ
};

// One entry per workload variant that ran on two or more GPUs, in first-seen order.
std::vector<AcrossGpus> compare_gpus(const std::vector<WorkloadReport>& reports);

}  // namespace gpuclk::bench
