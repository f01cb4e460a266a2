#include "job.h"

#include <algorithm>
#include <array>

namespace gpuclk::sim {
namespace {

// Intensities: the GEMMs are the calibration's 8192³ GEMMs (h100-calibration.toml: BF16 850 FLOP
// per DRAM byte from gpm.json's 24 % DRAM at 681 TFLOP/s; TF32 and FP32 move 4-byte operands);
// FP8 moves 1-byte operands, twice BF16's FLOPs per byte. `fma` is a register-only FMA chain (no
// DRAM). The triad a = b + s·c moves 24 bytes per 2 FP64 FLOPs. Occupancies as the calibration
// runs show (GEMM 14 %, copy 80 %).
constexpr std::array<JobKind, 8> kKinds = {{
    {"gemm-bf16", PhaseKind::compute, DataType::bf16, 850, 0.14, "FLOP"},
    {"gemm-fp16", PhaseKind::compute, DataType::fp16, 850, 0.14, "FLOP"},
    {"gemm-tf32", PhaseKind::compute, DataType::tf32, 425, 0.14, "FLOP"},
    {"gemm-fp32", PhaseKind::compute, DataType::fp32, 400, 0.14, "FLOP"},
    {"gemm-fp8", PhaseKind::compute, DataType::fp8, 1700, 0.14, "FLOP"},
    {"fma", PhaseKind::compute, DataType::fp32, 0, 0.5, "FLOP"},
    {"mem-copy", PhaseKind::memory, DataType::fp32, 0, 0.8, "B"},
    {"mem-triad", PhaseKind::memory, DataType::fp64, 2.0 / 24.0, 0.8, "B"},
}};

}  // namespace

std::span<const JobKind> job_kinds() { return kKinds; }

std::optional<std::uint32_t> job_kind_index(std::string_view name) {
  for (std::uint32_t i = 0; i < kKinds.size(); ++i) {
    if (kKinds[i].name == name) return i;
  }
  return std::nullopt;
}

void add_utilization(UtilizationSamples& s, double busy_s, double end_s, bool last) {
  constexpr double kPeriod = kJobSamplePeriodS;
  s.period_busy_s += busy_s;
  const auto push = [&](double at, double length_s) {
    s.end_s[s.pos] = at;
    s.sm[s.pos] = length_s > 0 ? std::clamp(s.period_busy_s / length_s, 0.0, 1.0) : 0.0;
    s.pos = (s.pos + 1) % kJobSamples;
    s.period_busy_s = 0;
  };
  for (int n = 0; n < kJobSamples && end_s >= s.period_start_s + kPeriod - 1e-9; ++n) {
    push(s.period_start_s + kPeriod, kPeriod);
    s.period_start_s += kPeriod;
  }
  if (end_s >= s.period_start_s + kPeriod) s.period_start_s = end_s;  // a coarse step
  if (last && end_s > s.period_start_s + 1e-9) push(end_s, end_s - s.period_start_s);
}

Phase job_phase(const InjectedJob& job) {
  const JobKind& k = kKinds[job.kind < kKinds.size() ? job.kind : 0];
  Phase p;
  p.name = std::string(k.name);
  p.kind = k.phase_kind;
  p.dtype = k.dtype;
  p.intensity = k.intensity;
  p.sm_occupancy = k.sm_occupancy;
  // The amount is only a bound here (run_job ends the job); the phase itself never ends.
  if (p.kind == PhaseKind::compute) {
    p.flops = 1e300;
  } else {
    p.bytes = 1e300;
  }
  return p;
}

}  // namespace gpuclk::sim
