// Kernels of bench nccl: inputs whose every sum is exact in float32, and a check of each output
// element on the GPU (nccl-tests checks on the GPU too; copying gigabytes back would take longer
// than the measurement).
#include <cstdint>

#include "bench/detail/cuda_check.h"
#include "bench/nccl_kernels.h"

namespace gpuclk::bench::detail {

namespace {

constexpr int kThreads = 256;

// Rank r's input element i: an integer in 0..60. A sum over up to 275,000 ranks stays below
// 2^24, where float32 holds every integer: no rounding, so the check is exact.
__host__ __device__ inline float input_value(int rank, std::size_t i) {
  return float((i * 7 + std::size_t(rank) * 13) % 61);
}

__device__ float expected(const CheckSpec& s, std::size_t k) {
  switch (s.kind) {
    case NcclCheck::all_reduce: {
      float sum = 0;
      for (int r = 0; r < s.ranks; ++r) sum += input_value(r, k);
      return sum;
    }
    case NcclCheck::all_gather:
      return input_value(int(k / s.part), k % s.part);
    case NcclCheck::reduce_scatter: {
      float sum = 0;
      for (int r = 0; r < s.ranks; ++r) sum += input_value(r, std::size_t(s.rank) * s.part + k);
      return sum;
    }
    case NcclCheck::broadcast:
      return input_value(0, k);
    case NcclCheck::all_to_all:
      return input_value(int(k / s.part), std::size_t(s.rank) * s.part + k % s.part);
    case NcclCheck::from_peer:
      return input_value(s.peer, k);
  }
  return -2;
}

__global__ void fill_kernel(float* data, std::size_t count, int rank) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = input_value(rank, i);
}

__global__ void clear_kernel(float* data, std::size_t count) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = -1.0f;
}

__global__ void check_kernel(const float* data, CheckSpec spec, unsigned long long* wrong) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < spec.count;
       k += stride) {
    if (data[k] != expected(spec, k)) ++mine;
  }
  if (mine) atomicAdd(wrong, mine);
}

unsigned blocks_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return unsigned(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void launch_fill(float* data, std::size_t count, int rank, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, rank);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_clear(float* data, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  clear_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_check(const float* data, const CheckSpec& spec, unsigned long long* wrong,
                  cudaStream_t stream) {
  if (spec.count == 0) return;
  check_kernel<<<blocks_for(spec.count), kThreads, 0, stream>>>(data, spec, wrong);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuclk::bench::detail
