// Random inputs and the fp64 reference of the GEMM check. Speed does not matter here; being
// independent of cuBLAS does: the reference is a plain loop in double over the stored values.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "bench/detail/cuda_check.h"
#include "bench/gemm_kernels.h"
#include "bench/random.h"

namespace gpuclk::bench::detail {

namespace {

__device__ inline void store(float* p, float v) { *p = v; }
__device__ inline void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ inline void store(__nv_fp8_e4m3* p, float v) { *p = __nv_fp8_e4m3(v); }

__device__ inline double load(const float* p) { return *p; }
__device__ inline double load(const __half* p) { return __half2float(*p); }
__device__ inline double load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline double load(const __nv_fp8_e4m3* p) { return float(*p); }

template <class T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store(data + i, random_signed_unit(seed, i));
  }
}

template <class T>
void fill_random_typed(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  const unsigned grid = unsigned(blocks < 65536 ? blocks : 65536);
  fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<T*>(data), count, seed);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void fill_constant_kernel(T* data, std::size_t count, float value) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store(data + i, value);
  }
}

template <class T>
void fill_constant_typed(void* data, std::size_t count, float value, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  const unsigned grid = unsigned(blocks < 65536 ? blocks : 65536);
  fill_constant_kernel<<<grid, kThreads, 0, stream>>>(static_cast<T*>(data), count, value);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

constexpr int kReferenceThreads = 256;

template <class TIn, class TOut>
__global__ void reference_kernel(const TIn* a, const TIn* b, const TOut* d, std::int64_t m,
                                 std::int64_t k, bool a_transposed, const std::int64_t* rows,
                                 const std::int64_t* cols, double* out) {
  const std::int64_t i = rows[blockIdx.x];
  const std::int64_t j = cols[blockIdx.x];
  double sum = 0;
  double squares = 0;
  for (std::int64_t l = threadIdx.x; l < k; l += blockDim.x) {
    const double a_il = load(a + (a_transposed ? l + i * k : i + l * m));
    const double b_lj = load(b + l + j * k);
    const double term = a_il * b_lj;
    sum += term;
    squares += term * term;
  }
  __shared__ double sums[kReferenceThreads];
  __shared__ double sum_squares[kReferenceThreads];
  sums[threadIdx.x] = sum;
  sum_squares[threadIdx.x] = squares;
  __syncthreads();
  for (int half = kReferenceThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      sum_squares[threadIdx.x] += sum_squares[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = sums[0];
    out[3 * blockIdx.x + 1] = sqrt(sum_squares[0]);
    out[3 * blockIdx.x + 2] = load(d + i + j * m);
  }
}

template <class TIn, class TOut>
void reference_typed(const ReferenceProblem& p, const std::int64_t* rows, const std::int64_t* cols,
                     int count, double* out, cudaStream_t stream) {
  reference_kernel<<<unsigned(count), kReferenceThreads, 0, stream>>>(
      static_cast<const TIn*>(p.a), static_cast<const TIn*>(p.b), static_cast<const TOut*>(p.d),
      p.m, p.k, p.a_transposed, rows, cols, out);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_random(ElementType type, void* data, std::size_t count, std::uint64_t seed,
                 cudaStream_t stream) {
  switch (type) {
    case ElementType::f32:
      return fill_random_typed<float>(data, count, seed, stream);
    case ElementType::f16:
      return fill_random_typed<__half>(data, count, seed, stream);
    case ElementType::bf16:
      return fill_random_typed<__nv_bfloat16>(data, count, seed, stream);
    case ElementType::e4m3:
      return fill_random_typed<__nv_fp8_e4m3>(data, count, seed, stream);
  }
}

void fill_constant(ElementType type, void* data, std::size_t count, float value,
                   cudaStream_t stream) {
  switch (type) {
    case ElementType::f32:
      return fill_constant_typed<float>(data, count, value, stream);
    case ElementType::f16:
      return fill_constant_typed<__half>(data, count, value, stream);
    case ElementType::bf16:
      return fill_constant_typed<__nv_bfloat16>(data, count, value, stream);
    case ElementType::e4m3:
      return fill_constant_typed<__nv_fp8_e4m3>(data, count, value, stream);
  }
}

void launch_reference(const ReferenceProblem& p, const std::int64_t* rows, const std::int64_t* cols,
                      int count, double* out, cudaStream_t stream) {
  if (count <= 0) return;
  using E = ElementType;
  // The combinations the GEMM workload uses (see gemm.cpp's table).
  if (p.input_type == E::f32 && p.output_type == E::f32) {
    reference_typed<float, float>(p, rows, cols, count, out, stream);
  } else if (p.input_type == E::f16 && p.output_type == E::f16) {
    reference_typed<__half, __half>(p, rows, cols, count, out, stream);
  } else if (p.input_type == E::bf16 && p.output_type == E::bf16) {
    reference_typed<__nv_bfloat16, __nv_bfloat16>(p, rows, cols, count, out, stream);
  } else if (p.input_type == E::e4m3 && p.output_type == E::bf16) {
    reference_typed<__nv_fp8_e4m3, __nv_bfloat16>(p, rows, cols, count, out, stream);
  } else {
    throw Error(ExitCode::other, "gemm reference: unsupported input/output type combination");
  }
}

}  // namespace gpuclk::bench::detail
