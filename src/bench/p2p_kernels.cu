// Kernels of bench p2p. The copy kernel is shaped like nvbandwidth's SM copy (one block of 512
// threads per SM, a dozen 16-byte loads in flight per thread, interleaved so every warp access
// is coalesced): over NVLink that is far more bytes in flight than the link's bandwidth-delay
// product (~0.4 MB at 480 GB/s and 0.8 us), so the link, not the kernel, sets the rate.
#include <cstdint>

#include "bench/detail/cuda_check.h"
#include "bench/p2p_kernels.h"

namespace gpuclk::bench::detail {

namespace {

constexpr int kSmCopyThreads = 512;
constexpr int kSmCopyDepth = 12;

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(const volatile int* flag, unsigned long long timeout_ns) {
  const unsigned long long deadline = global_timer_ns() + timeout_ns;
  while (*flag == 0) {
    if (global_timer_ns() > deadline) break;
  }
}

__global__ void sm_copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                               std::size_t vectors, int loops) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int loop = 0; loop < loops; ++loop) {
    std::size_t i = first;
    for (; i + (kSmCopyDepth - 1) * stride < vectors; i += kSmCopyDepth * stride) {
      uint4 v[kSmCopyDepth];
#pragma unroll
      for (int u = 0; u < kSmCopyDepth; ++u) v[u] = src[i + u * stride];
#pragma unroll
      for (int u = 0; u < kSmCopyDepth; ++u) dst[i + u * stride] = v[u];
    }
    for (; i < vectors; i += stride) dst[i] = src[i];
  }
}

__global__ void build_chain_kernel(std::uintptr_t* words, std::size_t count, std::size_t step) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const auto base = reinterpret_cast<std::uintptr_t>(words);
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    words[i] = base + ((i + step) % count) * sizeof(std::uintptr_t);
  }
}

__global__ void chase_kernel(const void* head, long long accesses, void** sink) {
  auto p = static_cast<void* const*>(head);
  for (long long i = 0; i < accesses; ++i) p = static_cast<void* const*>(*p);
  *sink = const_cast<void**>(p);
}

}  // namespace

void preload_p2p_kernels() {
  cudaFuncAttributes attributes{};
  GPUCLK_CUDA_CHECK(cudaFuncGetAttributes(&attributes, spin_kernel));
  GPUCLK_CUDA_CHECK(cudaFuncGetAttributes(&attributes, sm_copy_kernel));
  GPUCLK_CUDA_CHECK(cudaFuncGetAttributes(&attributes, build_chain_kernel));
  GPUCLK_CUDA_CHECK(cudaFuncGetAttributes(&attributes, chase_kernel));
}

void launch_spin(const volatile int* flag, unsigned long long timeout_ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(flag, timeout_ns);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_sm_copy(void* dst, const void* src, std::size_t bytes, int loops, int sms,
                    cudaStream_t stream) {
  sm_copy_kernel<<<unsigned(sms > 0 ? sms : 1), kSmCopyThreads, 0, stream>>>(
      static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / sizeof(uint4), loops);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_build_chain(void* base, std::size_t bytes, std::size_t stride_bytes,
                        cudaStream_t stream) {
  const std::size_t count = bytes / sizeof(std::uintptr_t);
  const std::size_t blocks = (count + 255) / 256;
  build_chain_kernel<<<unsigned(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      static_cast<std::uintptr_t*>(base), count, stride_bytes / sizeof(std::uintptr_t));
  GPUCLK_CUDA_CHECK_LAUNCH();
}

void launch_chase(const void* head, long long accesses, void** sink, cudaStream_t stream) {
  chase_kernel<<<1, 1, 0, stream>>>(head, accesses, sink);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuclk::bench::detail
