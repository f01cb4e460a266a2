#include "bench/report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "gpu/clock_reasons.h"

namespace gpuclk::bench {
namespace {

gpu::DataType to_data_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::fp32:
      return gpu::DataType::fp32;
    case GemmDtype::tf32:
      return gpu::DataType::tf32;
    case GemmDtype::fp16:
      return gpu::DataType::fp16;
    case GemmDtype::bf16:
      return gpu::DataType::bf16;
    case GemmDtype::fp8:
      return gpu::DataType::fp8;
  }
  return gpu::DataType::fp32;
}

std::optional<Peak> arithmetic_peak(gpu::DataType type, gpu::ComputeCapability cc, unsigned sms,
                                    const GpuFacts& gpu, const telemetry::Summary* window) {
  const gpu::ArchSpec* arch = gpu::find_arch(cc);
  if (!arch || arch->flop_per_clock(type) <= 0 || sms == 0 || !gpu.max_sm_clock)
    return std::nullopt;
  Peak p;
  p.domain = PeakDomain::sm_clock;
  p.max_clock = *gpu.max_sm_clock;
  p.at_max_clock = gpu::peak_flops(*arch, type, sms, p.max_clock).value();
  if (window && window->sm_clock) {
    p.observed_clock = window->sm_clock->median;
    p.at_observed_clock = gpu::peak_flops(*arch, type, sms, *p.observed_clock).value();
  }
  p.basis = fmt::format("{} SMs x {:.0f} FLOP/clock/SM ({} {})", sms, arch->flop_per_clock(type),
                        arch->family, gpu::to_string(type));
  return p;
}

// Copies and triads are bounded by DRAM, whose bandwidth follows the memory clock.
std::optional<Peak> bandwidth_peak(const GpuFacts& gpu, const telemetry::Summary* window) {
  if (!gpu.max_memory_clock || !gpu.memory_bus_width_bits) return std::nullopt;
  Peak p;
  p.domain = PeakDomain::memory_clock;
  p.max_clock = *gpu.max_memory_clock;
  p.at_max_clock = gpu::peak_memory_bandwidth(p.max_clock, *gpu.memory_bus_width_bits).value();
  if (window && window->memory_clock) {
    p.observed_clock = window->memory_clock->median;
    p.at_observed_clock =
        gpu::peak_memory_bandwidth(*p.observed_clock, *gpu.memory_bus_width_bits).value();
  }
  p.basis = fmt::format("{}-bit bus x 2 transfers per memory clock", *gpu.memory_bus_width_bits);
  return p;
}

std::optional<double> ratio(double num, std::optional<double> den) {
  if (!den || *den <= 0) return std::nullopt;
  return num / *den;
}

void add_telemetry(WorkloadReport& r, const telemetry::Summary& s) {
  r.has_telemetry = s.fast_samples > 0;
  r.sm_clock = s.sm_clock;
  r.memory_clock = s.memory_clock;
  r.power_mean = s.power_mean;
  r.power_peak = s.power_peak;
  r.energy = s.energy;
  r.gpu_utilization = s.gpu_utilization;
  r.gpm = s.gpm;
  r.temperature_max = s.temperature_max;
  for (const auto& info : gpu::clock_reasons()) {
    if (auto f = s.reason_fraction(info.bit); f && f->value() > 0) {
      r.reasons.push_back({info.bit, std::string(info.key), f->value()});
    }
  }
  if (r.power_mean && r.power_mean->value() > 0) {
    r.rate_per_watt = r.rate.median / r.power_mean->value();
  }
  // Energy over the window divided by the work done in it; the mean power over the mean rate
  // where the counter gave no energy.
  if (r.energy && r.work_done > 0) {
    r.joules_per_unit = r.energy->value() / r.work_done;
  } else if (r.power_mean && r.rate.median > 0) {
    r.joules_per_unit = r.power_mean->value() / r.rate.median;
  }
}

}  // namespace

std::optional<gpu::DataType> peak_data_type(const WorkloadSpec& spec) {
  if (const auto* gemm = std::get_if<GemmSpec>(&spec)) return to_data_type(gemm->dtype);
  if (std::holds_alternative<FmaSpec>(spec)) return gpu::DataType::fp32;
  return std::nullopt;
}

std::optional<Peak> compute_peak(const WorkloadSpec& spec, gpu::ComputeCapability cc, unsigned sms,
                                 const GpuFacts& gpu, const telemetry::Summary* window) {
  if (auto type = peak_data_type(spec)) return arithmetic_peak(*type, cc, sms, gpu, window);
  return bandwidth_peak(gpu, window);
}

WorkloadReport make_report(const WorkloadSpec& spec, const Result& result, const GpuFacts& gpu,
                           const telemetry::Summary* window) {
  WorkloadReport r;
  r.gpu = gpu;
  r.cuda_ordinal = result.device.ordinal;
  r.workload = result.workload;
  r.variant = result.variant;
  r.input = result.input;
  r.unit = result.unit;
  r.rate = result.rate;
  r.window_seconds = std::chrono::duration<double>(result.window_end - result.window_start).count();
  r.work_done = result.overall_rate * r.window_seconds;
  r.verification = result.verification;
  r.details = result.details;
  r.repetitions = result.repetitions;

  r.peak = compute_peak(spec, {result.device.cc_major, result.device.cc_minor},
                        unsigned(std::max(result.device.sm_count, 0)), gpu, window);
  if (r.peak) {
    r.efficiency_at_max_clock = ratio(r.rate.median, r.peak->at_max_clock);
    r.efficiency_at_observed_clock = ratio(r.rate.median, r.peak->at_observed_clock);
    if (r.peak->observed_clock && r.efficiency_at_observed_clock && r.peak->max_clock.value() > 0) {
      const double clock_share = *r.peak->observed_clock / r.peak->max_clock;
      r.gap = GapSplit{1 - clock_share, clock_share * (1 - *r.efficiency_at_observed_clock)};
    }
  }
  if (window) add_telemetry(r, *window);
  r.verdicts = explain(r);
  return r;
}

std::vector<AcrossGpus> compare_gpus(const std::vector<WorkloadReport>& reports) {
  std::vector<AcrossGpus> out;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    auto key = std::pair(reports[i].workload, reports[i].variant);
    if (groups[key].empty()) order.push_back(key);
    groups[key].push_back(i);
  }
  for (const auto& key : order) {
    const auto& members = groups[key];
    if (members.size() < 2) continue;
    AcrossGpus a{key.first, key.second, members.front(), members.front(), 1, {}};
    for (std::size_t i : members) {
      if (reports[i].rate.median > reports[a.fastest].rate.median) a.fastest = i;
      if (reports[i].rate.median < reports[a.slowest].rate.median) a.slowest = i;
    }
    const WorkloadReport& fast = reports[a.fastest];
    const WorkloadReport& slow = reports[a.slowest];
    a.slowest_vs_fastest = fast.rate.median > 0 ? slow.rate.median / fast.rate.median : 1;
    if (a.slowest_vs_fastest >= 0.97) {
      a.verdict =
          fmt::format("GPUs within {} of each other", percent_text(1 - a.slowest_vs_fastest));
    } else {
      a.verdict = fmt::format("GPU {} is {} slower than GPU {}", slow.gpu.index,
                              percent_text(1 - a.slowest_vs_fastest), fast.gpu.index);
      if (slow.sm_clock && fast.sm_clock &&
          std::abs(slow.sm_clock->median.value() - fast.sm_clock->median.value()) >
              0.02 * fast.sm_clock->median.value()) {
        a.verdict += fmt::format(": its median SM clock was {:.0f} MHz against {:.0f} MHz",
                                 slow.sm_clock->median.value(), fast.sm_clock->median.value());
        if (!slow.verdicts.empty()) a.verdict += " (" + slow.verdicts.front().text + ")";
      } else if (slow.sm_clock && fast.sm_clock) {
        a.verdict +=
            " at the same SM clock: not the clock (look for another process, PCIe or "
            "memory errors: gpuclk doctor)";
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpuclk::bench
