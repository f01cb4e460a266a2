// Bandwidth kernels. The triad's threads move several 16-byte vectors per loop trip so enough
// loads are in flight to cover DRAM latency with one resident wave of blocks (grid = SMs × blocks
// per SM); the copy is a one-shot grid (copy_kernel).
#include <algorithm>

#include "bench/detail/cuda_check.h"
#include "bench/mem_kernels.h"
#include "bench/random.h"

namespace gpuclk::bench::detail {

namespace {

constexpr int kUnroll = 4;

__global__ void fill_words_kernel(std::uint32_t* data, std::size_t words, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    data[i] = std::uint32_t(random_bits(seed, i) >> 32);
  }
}

__global__ void fill_floats_kernel(float* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = random_signed_unit(seed, i);
  }
}

// One 16-byte vector per thread and no loop: a grid of one block per kCopyThreads vectors (65 536
// blocks for 1 GiB) that the block scheduler hands to the SMs as they free up. On the H100 this
// reached 1.00-1.01x cudaMemcpyAsync (itself an SM kernel), where every resident-grid kernel we
// tried levelled off below: grid-stride loops with 1-16 vectors per thread 0.94-0.95x, TMA bulk
// copies 0.96x (perf/copy_kernel_variants.cu, docs/results/bench_copy_h100.md).
constexpr int kCopyThreads = 1024;

__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                            std::size_t vectors) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) dst[i] = src[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, std::size_t vectors) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    float4 vb[kUnroll], vc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      vb[u] = b[i + u * stride];
      vc[u] = c[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      a[i + u * stride] =
          make_float4(__fmaf_rn(s, vc[u].x, vb[u].x), __fmaf_rn(s, vc[u].y, vb[u].y),
                      __fmaf_rn(s, vc[u].z, vb[u].z), __fmaf_rn(s, vc[u].w, vb[u].w));
    }
  }
  for (; i < vectors; i += stride) {
    const float4 vb = b[i], vc = c[i];
    a[i] = make_float4(__fmaf_rn(s, vc.x, vb.x), __fmaf_rn(s, vc.y, vb.y), __fmaf_rn(s, vc.z, vb.z),
                       __fmaf_rn(s, vc.w, vb.w));
  }
}

__global__ void copy_mismatch_kernel(const std::uint32_t* x, const std::uint32_t* y,
                                     std::size_t words, unsigned long long* mismatches) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    local += x[i] != y[i];
  }
  if (local) atomicAdd(mismatches, local);
}

__global__ void triad_mismatch_kernel(const float* a, const float* b, const float* c, float s,
                                      std::size_t count, unsigned long long* mismatches) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    local += __float_as_uint(a[i]) != __float_as_uint(__fmaf_rn(s, c[i], b[i]));
  }
  if (local) atomicAdd(mismatches, local);
}

// Grid for the helper kernels (fills, checks), whose speed does not matter.
unsigned helper_grid(std::size_t items) {
  const std::size_t blocks = (items + kMemThreads - 1) / kMemThreads;
  return unsigned(blocks < 8192 ? (blocks ? blocks : 1) : 8192);
}

}  // namespace

void fill_random_words(std::uint32_t* data, std::size_t words, std::uint64_t seed,
                       cudaStream_t stream) {
  fill_words_kernel<<<helper_grid(words), kMemThreads, 0, stream>>>(data, words, seed);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void fill_random_floats(float* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  fill_floats_kernel<<<helper_grid(count), kMemThreads, 0, stream>>>(data, count, seed);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

CopyPlan plan_copy(std::size_t bytes) {
  const std::size_t vectors = bytes / sizeof(uint4);
  return {int((vectors + kCopyThreads - 1) / kCopyThreads), kCopyThreads};
}

int triad_blocks_per_sm() {
  int blocks = 0;
  GPUCLK_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, triad_kernel, kMemThreads, 0));
  return blocks;
}

void launch_copy(void* dst, const void* src, std::size_t bytes, const CopyPlan& plan,
                 cudaStream_t stream) {
  copy_kernel<<<unsigned(plan.blocks), unsigned(plan.threads), 0, stream>>>(
      static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / sizeof(uint4));
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_triad(float* a, const float* b, const float* c, float scalar, std::size_t count,
                  int blocks, cudaStream_t stream) {
  triad_kernel<<<unsigned(blocks), kMemThreads, 0, stream>>>(
      reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
      reinterpret_cast<const float4*>(c), scalar, count / 4);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void count_copy_mismatches(const std::uint32_t* x, const std::uint32_t* y, std::size_t words,
                           unsigned long long* mismatches, cudaStream_t stream) {
  copy_mismatch_kernel<<<helper_grid(words), kMemThreads, 0, stream>>>(x, y, words, mismatches);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void count_triad_mismatches(const float* a, const float* b, const float* c, float scalar,
                            std::size_t count, unsigned long long* mismatches,
                            cudaStream_t stream) {
  triad_mismatch_kernel<<<helper_grid(count), kMemThreads, 0, stream>>>(a, b, c, scalar, count,
                                                                        mismatches);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuclk::bench::detail
