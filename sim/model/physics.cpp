#include "physics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuclk::sim {
namespace {

constexpr double kDefaultComputeSmActive = 0.96;   // GPM SM util of the BF16 GEMM (gpm.json)
constexpr double kDefaultMemorySmActive = 0.99;    // GPM SM util of the 1 GiB copy
constexpr double kDefaultComputeOccupancy = 0.14;  // GEMMs run few, fat warps
constexpr double kDefaultMemoryOccupancy = 0.80;   // copies fill the SMs with warps
constexpr double kPcieProtocolEfficiency = 0.85;   // TLP headers, flow control

// Bytes per element of a GEMM's operands and of its result (FP8 and INT8 GEMMs write 16 bits).
double operand_bytes(DataType t) {
  switch (t) {
    case DataType::fp64:
      return 8;
    case DataType::fp32:
    case DataType::tf32:
      return 4;
    case DataType::fp16:
    case DataType::bf16:
      return 2;
    case DataType::fp8:
    case DataType::int8:
      return 1;
  }
  return 2;
}
double result_bytes(DataType t) { return std::max(2.0, operand_bytes(t)); }

// A tm × tn output tile reads (tm + tn) × K operand elements for 2 tm tn K FLOPs.
double tile_bytes_per_flop(DataType t, double tm, double tn) {
  return operand_bytes(t) * (tm + tn) / (2 * tm * tn);
}

// A power term whose `share` follows the data: x × (1 − share × (1 − a)), from x and its quiet
// part x × (1 − a).
double by_data(double share, double x, double x_quiet) { return x - share * x_quiet; }

double efficiency_of(const GpuSpec& spec, const Phase& phase) {
  if (phase.efficiency > 0) return phase.efficiency;
  if (phase.kind == PhaseKind::memory) return spec.memory_default_efficiency;
  return spec.default_efficiency[static_cast<int>(phase.dtype)];
}

void fill_pipe_metrics(TickActivity& a, DataType type, double pipe_utilization) {
  a.pipe[static_cast<int>(type)] = pipe_utilization;
  auto set = [&](Activity which, double v) { a.activity[static_cast<int>(which)] = v; };
  switch (type) {
    case DataType::fp64:
      set(Activity::fp64, pipe_utilization);
      break;
    case DataType::fp32:
      set(Activity::fp32, pipe_utilization);
      break;
    case DataType::tf32:
    case DataType::fp16:
    case DataType::bf16:
      set(Activity::tensor, pipe_utilization);
      set(Activity::hmma_tensor, pipe_utilization);
      break;
    case DataType::fp8:
    case DataType::int8:
      set(Activity::tensor, pipe_utilization);
      set(Activity::imma_tensor, pipe_utilization);
      break;
  }
}

}  // namespace

double core_voltage(const GpuSpec& spec, double sm_mhz) { return spec.voltage_curve(sm_mhz); }

double dynamic_scale(const GpuSpec& spec, double sm_mhz) {
  const double v_max = core_voltage(spec, spec.sm_max_mhz);
  const double v = core_voltage(spec, sm_mhz);
  if (v_max <= 0) return sm_mhz / spec.sm_max_mhz;
  return (v / v_max) * (v / v_max) * sm_mhz / spec.sm_max_mhz;
}

double peak_dram_bandwidth(const GpuSpec& spec, double memory_mhz) {
  return spec.memory_bandwidth_bytes_per_s * memory_mhz / spec.max_memory_mhz();
}

double reachable_dram_bandwidth(const GpuSpec& spec, double sm_mhz, double memory_mhz) {
  double shape = 1;
  if (!spec.bandwidth_vs_sm_throughput.empty()) {
    shape = spec.bandwidth_vs_sm_throughput(sm_mhz / spec.sm_max_mhz) /
            spec.bandwidth_vs_sm_throughput(1.0);
  }
  return peak_dram_bandwidth(spec, memory_mhz) * std::min(1.0, shape);
}

double peak_flops(const GpuSpec& spec, DataType type, double sm_mhz) {
  return spec.flop_per_clock_per_sm[static_cast<int>(type)] * spec.sm_count * sm_mhz * 1e6;
}

GemmRate gemm_rate(const GpuSpec& spec, const Phase& phase, double sm_mhz) {
  const int t = static_cast<int>(phase.dtype);
  const auto m = static_cast<double>(phase.gemm_m);
  const auto n = static_cast<double>(phase.gemm_n);
  const auto k = static_cast<double>(phase.gemm_k);
  const auto batch = static_cast<double>(std::max<std::uint64_t>(phase.gemm_batch, 1));
  // The output tile that fills the SMs' waves best, weighed by its own efficiency.
  struct Tile {
    double m, n, q;
  };
  const Tile tiles[] = {
      {128, 256, 1.0}, {128, 128, spec.gemm_tile_q128}, {64, 128, spec.gemm_tile_q64}};
  const double sms = std::max(1.0, static_cast<double>(spec.sm_count));
  double fill = 0;
  double waves = 1;
  Tile chosen = tiles[0];
  for (const Tile& tile : tiles) {
    const double count = std::ceil(m / tile.m) * std::ceil(n / tile.n) * batch;
    const double w = std::ceil(count / sms);
    const double f = tile.q * count / (w * sms);
    if (f > fill) {
      fill = f;
      waves = w;
      chosen = tile;
    }
  }
  const double base =
      spec.gemm_base_efficiency[t] > 0 ? spec.gemm_base_efficiency[t] : spec.default_efficiency[t];
  const double efficiency = base * fill * k / (k + spec.gemm_k0[t]);
  GemmRate r;
  r.peak_flops_per_s = peak_flops(spec, phase.dtype, sm_mhz);
  const double flop = 2 * m * n * k * batch;
  if (r.peak_flops_per_s <= 0 || efficiency <= 0 || flop <= 0) return r;
  const double kernel_s = flop / (r.peak_flops_per_s * efficiency);
  // A kernel's fill and drain hide behind its other waves: a one-wave GEMM pays all of it.
  const double overhead_s = spec.gemm_call_overhead_s / waves;
  r.flops_per_s = flop / (kernel_s + overhead_s);
  r.kernel_share = kernel_s / (kernel_s + overhead_s);
  const double operands = operand_bytes(phase.dtype) * (m * k + k * n) * batch;
  const double result = result_bytes(phase.dtype) * m * n * batch;
  double bytes = operands * spec.gemm_operand_rereads + result;
  const bool resident = operands + result <= spec.l2_bytes;
  if (resident) bytes *= spec.gemm_l2_resident;
  r.bytes_per_flop = bytes / flop;
  r.tile_bytes_per_flop = resident ? 0 : tile_bytes_per_flop(phase.dtype, chosen.m, chosen.n);
  return r;
}

double pcie_bandwidth(std::uint32_t generation, std::uint32_t width) {
  static constexpr double kGigatransfers[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (generation == 0 || generation > 6) return 0;
  const double encoding = generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return kGigatransfers[generation] * 1e9 * encoding / 8.0 * width * kPcieProtocolEfficiency;
}

PhaseRates phase_rates(const GpuSpec& spec, const Phase& phase, double sm_mhz, double memory_mhz,
                       double pcie_bytes_per_s) {
  PhaseRates r;
  TickActivity& a = r.activity;
  const double efficiency = efficiency_of(spec, phase);
  const double peak_bw = peak_dram_bandwidth(spec, memory_mhz);
  switch (phase.kind) {
    case PhaseKind::compute: {
      // The roofline's bandwidth roof: what a copy kernel reaches at these clocks.
      const double bw_roof =
          spec.memory_default_efficiency * reachable_dram_bandwidth(spec, sm_mhz, memory_mhz);
      const double peak = peak_flops(spec, phase.dtype, sm_mhz);
      double rate = efficiency * peak;
      double intensity = phase.intensity;
      double kernel_share = 1;
      // Without a shape: the 128×256 tile of a large GEMM that does not fit in L2.
      double tile_bytes = tile_bytes_per_flop(phase.dtype, 128, 256);
      if (phase.gemm_m > 0) {
        const GemmRate g = gemm_rate(spec, phase, sm_mhz);
        rate = g.flops_per_s;
        kernel_share = g.kernel_share;
        intensity = g.bytes_per_flop > 0 ? 1 / g.bytes_per_flop : 0;
        tile_bytes = g.tile_bytes_per_flop;
      }
      if (intensity > 0) rate = std::min(rate, intensity * bw_roof);
      r.work_per_s = rate;
      a.flops_per_s = rate;
      a.dram_bytes_per_s = intensity > 0 ? rate / intensity : 0;
      const double tile_j = spec.memory_scope_tile_joules_per_byte[static_cast<int>(phase.dtype)];
      if (tile_j > 0) {
        a.tile_w = tile_j * tile_bytes * rate;
        a.compute_dram_bytes_per_s = a.dram_bytes_per_s;
      }
      fill_pipe_metrics(a, phase.dtype, peak > 0 ? rate / peak : 0);
      a.kernel[static_cast<int>(phase.dtype)] = kernel_share;
      a.busy = 1;
      a.activity[static_cast<int>(Activity::sm_active)] = kDefaultComputeSmActive;
      a.activity[static_cast<int>(Activity::sm_occupancy)] =
          phase.sm_occupancy >= 0 ? phase.sm_occupancy : kDefaultComputeOccupancy;
      r.context = true;
      break;
    }
    case PhaseKind::memory: {
      double rate = efficiency * reachable_dram_bandwidth(spec, sm_mhz, memory_mhz);
      const double peak = peak_flops(spec, phase.dtype, sm_mhz);
      if (phase.intensity > 0) {
        const double compute_roof = spec.default_efficiency[static_cast<int>(phase.dtype)] * peak;
        rate = std::min(rate, compute_roof / phase.intensity);
      }
      r.work_per_s = rate;
      a.dram_bytes_per_s = rate;
      a.flops_per_s = rate * phase.intensity;
      fill_pipe_metrics(a, phase.dtype, peak > 0 ? a.flops_per_s / peak : 0);
      a.busy = 1;
      a.activity[static_cast<int>(Activity::sm_active)] = kDefaultMemorySmActive;
      a.activity[static_cast<int>(Activity::sm_occupancy)] =
          phase.sm_occupancy >= 0 ? phase.sm_occupancy : kDefaultMemoryOccupancy;
      r.context = true;
      break;
    }
    case PhaseKind::transfer: {
      double rate = pcie_bytes_per_s;
      if (phase.pcie_bytes_per_s > 0) rate = std::min(rate, phase.pcie_bytes_per_s);
      r.work_per_s = rate;
      a.dram_bytes_per_s = rate;  // the copy engine writes (or reads) device memory
      (phase.to_host ? a.pcie_tx_bytes_per_s : a.pcie_rx_bytes_per_s) = rate;
      r.context = true;
      break;
    }
    case PhaseKind::p2p: {
      // `pcie_bytes_per_s` is the path to the peer here: its NVLinks, or PCIe where none.
      // ASSUMPTION: NCCL's copy kernels keep the SMs nominally busy and read device memory at
      // the link's rate; a link byte costs what a PCIe byte does (no NVLink power measured).
      double rate = pcie_bytes_per_s;
      if (phase.pcie_bytes_per_s > 0) rate = std::min(rate, phase.pcie_bytes_per_s);
      r.work_per_s = rate;
      a.dram_bytes_per_s = rate;
      a.nvlink_tx_bytes_per_s = rate;
      a.busy = 1;
      a.activity[static_cast<int>(Activity::sm_active)] = kDefaultMemorySmActive;
      a.activity[static_cast<int>(Activity::sm_occupancy)] =
          phase.sm_occupancy >= 0 ? phase.sm_occupancy : kDefaultMemoryOccupancy;
      r.context = true;
      break;
    }
    case PhaseKind::idle:
      r.work_per_s = 1;
      r.context = true;
      break;
    case PhaseKind::off:
      r.work_per_s = 1;
      r.context = false;
      break;
  }
  if (timed(phase)) r.work_per_s = 1;  // its amount is seconds
  a.dram = peak_bw > 0 ? a.dram_bytes_per_s / peak_bw : 0;
  const double quiet = 1 - phase.data_activity;
  for (int i = 0; i < kDataTypeCount; ++i) {
    a.kernel_quiet[i] = a.kernel[i] * quiet;
    a.pipe_quiet[i] = a.pipe[i] * quiet;
  }
  a.dram_quiet = a.dram * quiet;
  a.dram_bytes_per_s_quiet = a.dram_bytes_per_s * quiet;
  a.tile_w_quiet = a.tile_w * quiet;
  a.compute_dram_bytes_per_s_quiet = a.compute_dram_bytes_per_s * quiet;
  a.activity[static_cast<int>(Activity::dram)] = a.dram;
  a.activity[static_cast<int>(Activity::graphics)] = a.busy;
  return r;
}

double board_power(const GpuSpec& spec, double sm_mhz, double memory_mhz, double die_c,
                   const TickActivity& activity, double leakage_factor) {
  // A compute kernel draws its type's busy part while it runs and the rest in proportion to the
  // rate it achieves: a GEMM at 70 % of peak draws more than 70 % of a full pipe's power.
  // The data's switching activity scales each term's data-dependent share.
  const TickActivity& t = activity;
  double pipes = 0;
  for (int i = 0; i < kDataTypeCount; ++i) {
    const double busy = spec.pipe_busy_w[i];
    const double rest = spec.pipe_full_w[i] - busy;
    pipes += by_data(spec.pipe_data_share[i], busy * t.kernel[i] + rest * t.pipe[i],
                     busy * t.kernel_quiet[i] + rest * t.pipe_quiet[i]);
  }
  const double switching =
      spec.clock_tree_w + pipes +
      spec.load_store_full_w * by_data(spec.load_store_data_share, t.dram, t.dram_quiet);
  const double leakage = spec.static_w + spec.leakage_w_per_c * (die_c - spec.static_reference_c);
  const double memory_interface = spec.memory_interface_w * memory_mhz / spec.max_memory_mhz();
  const double traffic =
      spec.dram_joules_per_byte *
          by_data(spec.dram_data_share, t.dram_bytes_per_s, t.dram_bytes_per_s_quiet) +
      spec.pcie_joules_per_byte * (activity.pcie_rx_bytes_per_s + activity.pcie_tx_bytes_per_s +
                                   activity.nvlink_tx_bytes_per_s);
  return std::max(0.0, leakage * leakage_factor) + memory_interface +
         dynamic_scale(spec, sm_mhz) * switching + traffic;
}

double peak_pipe_power(const GpuSpec& spec, double sm_mhz, const TickActivity& activity) {
  double peak = 0;
  for (int i = 0; i < kDataTypeCount; ++i) peak += spec.pipe_peak_w[i] * activity.pipe[i];
  return peak > 0 ? dynamic_scale(spec, sm_mhz) * peak : 0;
}

double memory_power(const GpuSpec& spec, double memory_mhz, const TickActivity& activity) {
  // A compute kernel's DRAM bytes are an estimate (operand re-reads) that the card's memory scope
  // does not follow; its tile traffic through L2 stands for them (tile_w).
  const TickActivity& a = activity;
  return spec.memory_scope_idle_w * memory_mhz / spec.max_memory_mhz() +
         spec.memory_scope_joules_per_byte *
             by_data(spec.dram_data_share, a.dram_bytes_per_s - a.compute_dram_bytes_per_s,
                     a.dram_bytes_per_s_quiet - a.compute_dram_bytes_per_s_quiet) +
         by_data(spec.memory_scope_tile_data_share, a.tile_w, a.tile_w_quiet);
}

}  // namespace gpuclk::sim
