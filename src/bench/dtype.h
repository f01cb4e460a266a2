// GEMM data types of `gpuclk bench gemm` and how each maps to storage and accumulation.
// (gpu::DataType in src/gpu/arch.h names the same types for the peak table; to_data_type()
// lives in the report, which depends on both layers.)
#pragma once

#include <optional>
#include <string_view>

namespace gpuclk::bench {

// fp32: FP32 inputs and output, FP32 compute with TF32 off (CUBLAS_COMPUTE_32F).
// tf32: FP32 storage, tensor cores round inputs to TF32 (CUBLAS_COMPUTE_32F_FAST_TF32).
// fp16, bf16: 16-bit inputs and output, FP32 accumulate.
// fp8: E4M3 inputs, BF16 output, FP32 accumulate (compute capability 8.9+).
enum class GemmDtype { fp32, tf32, fp16, bf16, fp8 };
inline constexpr GemmDtype kAllGemmDtypes[] = {GemmDtype::fp32, GemmDtype::tf32, GemmDtype::fp16,
                                               GemmDtype::bf16, GemmDtype::fp8};

std::string_view to_string(GemmDtype dtype);
// "fp32", "tf32", "fp16", "bf16", "fp8" (also "e4m3"); nullopt otherwise.
std::optional<GemmDtype> parse_gemm_dtype(std::string_view name);

// Bytes per element as stored in device memory.
int input_element_bytes(GemmDtype dtype);
int output_element_bytes(GemmDtype dtype);

// Unit roundoff (half an ulp at 1.0) of the output storage type: 2^-24 fp32, 2^-11 fp16,
// 2^-8 bf16.
double output_unit_roundoff(GemmDtype dtype);

}  // namespace gpuclk::bench
