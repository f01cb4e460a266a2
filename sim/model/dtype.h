// Data types a workload phase computes in, and their names in scenario files.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuclk::sim {

// Dense math kinds the model gives a per-SM, per-clock rate for. tf32/fp16/bf16/fp8/int8 run on
// tensor cores; fp64 and fp32 on the vector pipes.
enum class DataType : std::uint8_t { fp64, fp32, tf32, fp16, bf16, fp8, int8 };
inline constexpr int kDataTypeCount = 7;

// A value per data type, indexed by DataType.
template <typename T>
using PerDataType = std::array<T, kDataTypeCount>;

inline constexpr std::array<std::string_view, kDataTypeCount> kDataTypeNames = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};

constexpr std::string_view to_string(DataType type) {
  return kDataTypeNames[static_cast<int>(type)];
}

constexpr std::optional<DataType> parse_data_type(std::string_view name) {
  for (int i = 0; i < kDataTypeCount; ++i) {
    if (kDataTypeNames[i] == name) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

constexpr bool runs_on_tensor_cores(DataType type) {
  return type != DataType::fp64 && type != DataType::fp32;
}

}  // namespace gpuclk::sim
