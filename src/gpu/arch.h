// Architecture table: peak arithmetic per SM per clock for each data type, so any view can say
// what the peak is at the max clock and at the clock the GPU runs now.
//
// Rates are dense (no structured sparsity), in FLOP per clock per SM, for the unit that runs a
// GEMM of that type: tensor cores for TF32/FP16/BF16/FP8 (and FP64 where it has them), the FMA
// pipes for FP32. 0 means the architecture has no such path. Sources: NVIDIA's architecture
// whitepapers and datasheets; each row cites its own in arch.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpu/units.h"

namespace gpuclk::gpu {

enum class DataType { fp64, fp32, tf32, fp16, bf16, fp8 };
inline constexpr DataType kAllDataTypes[] = {DataType::fp64, DataType::fp32, DataType::tf32,
                                             DataType::fp16, DataType::bf16, DataType::fp8};

std::string_view to_string(DataType t);
// Parses "fp32", "tf32", … ; nullopt for anything else.
std::optional<DataType> parse_data_type(std::string_view name);

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  auto operator<=>(const ComputeCapability&) const = default;
};

struct ArchSpec {
  std::string_view family;     // "Hopper"
  ComputeCapability cc;        // first compute capability the row applies to
  std::string_view example;    // "H100" — the chips the row was checked against
  unsigned fp32_cores_per_sm;  // CUDA cores per SM, to derive the SM count from NVML's core count
  double flop_per_clock_per_sm[6];  // indexed by DataType

  double flop_per_clock(DataType t) const { return flop_per_clock_per_sm[static_cast<int>(t)]; }
};

// The row for a compute capability (exact match, else the same major with the nearest lower
// minor); nullptr for architectures older than Volta or unknown.
const ArchSpec* find_arch(ComputeCapability cc);

// Peak rate of `sms` SMs at `clock`: flop/clock/SM × SMs × Hz. Zero when the type is absent.
units::FlopsPerSecond peak_flops(const ArchSpec& arch, DataType t, unsigned sms,
                                 units::Megahertz clock);

// Theoretical DRAM bandwidth: NVML's memory clock × bus width × 2 transfers per clock / 8.
// (Holds for HBM2e/HBM3 and GDDR6 as NVML reports their clocks: H100 2619 MHz × 5120 bit →
// 3.35 TB/s, A100 1593 MHz → 2.04 TB/s, L4 6251 MHz × 192 bit → 300 GB/s.)
units::BytesPerSecond peak_memory_bandwidth(units::Megahertz memory_clock, unsigned bus_width_bits);

}  // namespace gpuclk::gpu
