#include "gpu/arch.h"

#include <array>

namespace gpuclk::gpu {
namespace {

// Columns: fp64, fp32, tf32, fp16, bf16, fp8 — dense FLOP/clock/SM.
// Each figure = the datasheet's dense TFLOP/s ÷ (SMs × boost clock), rounded to the power of two
// the hardware implements.
constexpr std::array<ArchSpec, 9> kArchTable = {{
    // V100 SXM2: 7.8 TF FP64, 15.7 TF FP32, 125 TF FP16 tensor; 80 SMs @ 1530 MHz (Volta
    // whitepaper). No TF32/BF16/FP8.
    {"Volta", {7, 0}, "V100", 64, {64, 128, 0, 1024, 0, 0}},
    // T4: 65 TF FP16 tensor, 8.1 TF FP32; 40 SMs @ 1590 MHz (Turing whitepaper). FP64 1/32 rate.
    {"Turing", {7, 5}, "T4, RTX 20", 64, {4, 128, 0, 1024, 0, 0}},
    // A100 SXM4: 19.5 TF FP64 tensor, 19.5 TF FP32, 156 TF TF32, 312 TF FP16/BF16;
    // 108 SMs @ 1410 MHz (A100 datasheet, Ampere whitepaper).
    {"Ampere", {8, 0}, "A100, A30", 64, {128, 128, 1024, 2048, 2048, 0}},
    // A10/A40/RTX 30 (GA10x): 2×FP32 per SM; A10 31.2 TF FP32, 62.5 TF TF32, 125 TF FP16;
    // 72 SMs @ 1695 MHz (A10 datasheet).
    {"Ampere", {8, 6}, "A10, A40, RTX 30", 128, {4, 256, 512, 1024, 1024, 0}},
    // L4/L40S/RTX 40 (AD10x): L4 30.3 TF FP32, 60 TF TF32, 121 TF FP16/BF16, 242 TF FP8;
    // 58 SMs @ 2040 MHz (L4 datasheet).
    {"Ada Lovelace", {8, 9}, "L4, L40S, RTX 40", 128, {4, 256, 512, 1024, 1024, 2048}},
    // H100 SXM5: 67 TF FP64 tensor, 67 TF FP32, 495 TF TF32, 989 TF FP16/BF16, 1979 TF FP8;
    // 132 SMs (H100 datasheet; Hopper whitepaper). docs/calibration.md: 4096 BF16 → 1070 TF @ 1980.
    {"Hopper", {9, 0}, "H100, H200, GH200", 128, {256, 256, 2048, 4096, 4096, 8192}},
    // B200: 40 TF FP64, 80 TF FP32, 1.1 PF TF32, 2.25 PF FP16/BF16, 4.5 PF FP8 (dense);
    // 148 SMs @ ~1.9 GHz (HGX B200 datasheet). Tensor rates ×2 per SM over Hopper.
    {"Blackwell", {10, 0}, "B200, GB200", 128, {128, 256, 4096, 8192, 8192, 16384}},
    // B300/GB300 (10.3): same per-SM FP16/BF16/FP8 dense rate as B200; FP64 cut down.
    {"Blackwell Ultra", {10, 3}, "B300, GB300", 128, {4, 256, 4096, 8192, 8192, 16384}},
    // RTX 50 / RTX PRO 6000 (GB20x): like Ada per SM for tensor work with FP32 accumulation.
    {"Blackwell", {12, 0}, "RTX 50, RTX PRO 6000", 128, {4, 256, 512, 1024, 1024, 2048}},
}};

constexpr std::array<std::string_view, 6> kTypeNames = {"fp64", "fp32", "tf32",
                                                        "fp16", "bf16", "fp8"};

}  // namespace

std::string_view to_string(DataType t) { return kTypeNames[static_cast<int>(t)]; }

std::optional<DataType> parse_data_type(std::string_view name) {
  for (std::size_t i = 0; i < kTypeNames.size(); ++i) {
    if (kTypeNames[i] == name) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

const ArchSpec* find_arch(ComputeCapability cc) {
  const ArchSpec* best = nullptr;
  for (const auto& row : kArchTable) {
    if (row.cc.major == cc.major && row.cc.minor <= cc.minor) best = &row;
  }
  return best;
}

units::FlopsPerSecond peak_flops(const ArchSpec& arch, DataType t, unsigned sms,
                                 units::Megahertz clock) {
  return units::FlopsPerSecond(arch.flop_per_clock(t) * sms * units::hertz(clock));
}

units::BytesPerSecond peak_memory_bandwidth(units::Megahertz memory_clock,
                                            unsigned bus_width_bits) {
  return units::BytesPerSecond(units::hertz(memory_clock) * bus_width_bits * 2.0 / 8.0);
}

}  // namespace gpuclk::gpu
