// Device helpers of the GEMM workload: random inputs and the fp64 reference for sampled outputs.
// Plain C++ declarations; the kernels are in gemm_kernels.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpuclk::bench::detail {

enum class ElementType { f32, f16, bf16, e4m3 };

// Writes `count` elements uniform in [-1, 1) (rounded to `type`) from stream `seed`. Async.
void fill_random(ElementType type, void* data, std::size_t count, std::uint64_t seed,
                 cudaStream_t stream);

// Writes `count` elements of `value` (rounded to `type`). Async.
void fill_constant(ElementType type, void* data, std::size_t count, float value,
                   cudaStream_t stream);

// D = op(A)·B, column-major with tight leading dimensions: A is m×k (lda = m), or k×m (lda = k)
// when a_transposed; B is k×n (ldb = k); D is m×n (ldd = m).
struct ReferenceProblem {
  ElementType input_type = ElementType::f32;
  ElementType output_type = ElementType::f32;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* d = nullptr;
  std::int64_t m = 0, n = 0, k = 0;
  bool a_transposed = false;
};

// For each of `count` positions (rows[i], cols[i]) (device arrays), writes to `out` (device,
// 3·count doubles): out[3i] = Σ_l a·b in double, out[3i+1] = sqrt(Σ_l (a·b)²), out[3i+2] = D's
// value. Async.
void launch_reference(const ReferenceProblem& problem, const std::int64_t* rows,
                      const std::int64_t* cols, int count, double* out, cudaStream_t stream);

}  // namespace gpuclk::bench::detail
