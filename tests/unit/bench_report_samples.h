// Recorded H100 runs for the bench report tests: bench_power.json's measured
// phases (bench_report_h100_samples.csv, NVML every 50 ms) fed through telemetry's
// SummaryBuilder, with Results carrying the rates the same run measured.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "bench/report.h"
#include "gpu/clock_reasons.h"
#include "telemetry/summary.h"

namespace gpuclk::bench::testing {

struct RecordedPhase {
  telemetry::Summary summary;
  double seconds = 0;  // first to last sample
};

// The samples of `phase` ("gemm_bf16", "gemm_tf32", "gemm_fp32", "copy_1GiB"), every row also
// giving the energy counter (the calibration read it with the fast fields).
inline RecordedPhase load_h100_phase(const std::string& phase) {
  std::ifstream in(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/bench_report_h100_samples.csv");
  EXPECT_TRUE(in) << "missing bench_report_h100_samples.csv";
  const telemetry::TimePoint t0{std::chrono::seconds(1000)};
  auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(s));
  };
  std::optional<telemetry::SummaryBuilder> builder;
  double first = 0, last = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream row(line);
    std::string name, cell;
    std::getline(row, name, ',');
    if (name != phase) continue;
    double v[8];
    for (double& x : v) {
      std::getline(row, cell, ',');
      x = std::stod(cell);
    }
    if (!builder) builder.emplace(at(v[0])), first = v[0];
    last = v[0];
    telemetry::FastSample f;
    f.time = at(v[0]);
    f.sm_clock = units::Megahertz(v[1]);
    f.memory_clock = units::Megahertz(v[2]);
    f.power = units::from_milliwatts(static_cast<unsigned long long>(v[3]));
    f.gpu_temperature = units::Celsius(v[4]);
    f.clock_reasons = gpu::ClockReasons(static_cast<std::uint64_t>(v[5]));
    f.gpu_utilization = units::from_percent(v[6]);
    builder->add(f);
    telemetry::SlowSample s;
    s.time = f.time;
    s.energy = units::from_millijoules(static_cast<unsigned long long>(v[7]));
    builder->add(s);
  }
  EXPECT_TRUE(builder) << "no samples for phase " << phase;
  if (!builder) return {};
  return {builder->finish(at(last)), last - first};
}

// The H100 of the calibration as NVML describes it (nvml.json, docs/calibration.md).
inline GpuFacts h100_facts(unsigned index = 0) {
  GpuFacts g;
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(index);
  g.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  g.max_sm_clock = units::Megahertz(1980);
  g.max_memory_clock = units::Megahertz(2619);
  g.memory_bus_width_bits = 5120;
  g.power_limit = units::Watts(700);
  return g;
}

// A Result at `rate` (every repetition the same unless `spread` > 0) over `seconds`.
inline Result h100_result(const WorkloadSpec& spec, double rate, double seconds, int ordinal = 0,
                          double spread = 0) {
  Result r;
  r.device = {ordinal, "NVIDIA H100 80GB HBM3", "GPU-x", "00000000:10:00.0", 132, 9,
              0,       std::size_t(80) << 30};
  r.workload = workload_name(spec);
  r.variant = describe(spec);
  r.unit =
      std::holds_alternative<MemSpec>(spec) ? RateUnit::byte_per_second : RateUnit::flop_per_second;
  std::vector<double> rates;
  for (int i = 0; i < 10; ++i) {
    const double x = rate * (1 + spread * (i - 4.5) / 9);
    r.repetitions.push_back({i * seconds / 10, seconds / 10, 10, x});
    rates.push_back(x);
  }
  r.rate = summarize(rates);
  r.overall_rate = rate;
  r.window_start = std::chrono::steady_clock::time_point(std::chrono::seconds(1000));
  r.window_end = r.window_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(seconds));
  r.verification = verify_exact(64, 0, "test");
  return r;
}

}  // namespace gpuclk::bench::testing
