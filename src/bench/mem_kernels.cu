// Bandwidth kernels. Each thread moves several 16-byte vectors per loop trip so enough loads are
// in flight to cover DRAM latency with one resident wave of blocks (grid = SMs × blocks per SM).
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

__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                            std::size_t vectors) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  // Unrolled body: kUnroll independent loads issued before any store.
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}

// Hopper and later: TMA bulk copies. One thread per block streams kBulkChunk-byte chunks global ->
// shared -> global with cp.async.bulk, kBulkStages chunks in flight, so the SM's load/store units
// and registers do not bound the bytes in flight. On the H100 this reached 0.96x cudaMemcpyAsync
// where the best register-staged kernel reached 0.948x (perf/copy_kernel_variants.cu,
// docs/results/bench_copy_h100.md).
constexpr int kBulkStages = 6;
constexpr int kBulkChunk = 32 * 1024;
constexpr int kBulkThreads = 32;
constexpr int kBulkSharedBytes = kBulkStages * kBulkChunk;

__global__ void copy_bulk_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                 std::size_t vectors) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  auto shared_address = [](const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
  };
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ __align__(8) unsigned long long barrier[kBulkStages];
  const std::size_t chunks = vectors * sizeof(uint4) / kBulkChunk;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&barrier[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;");
    const char* in = reinterpret_cast<const char*>(src);
    char* out = reinterpret_cast<char*>(dst);
    // This block's chunks: blockIdx.x, blockIdx.x + gridDim.x, ... (neighbouring blocks read
    // neighbouring chunks at the same time).
    const std::size_t mine =
        chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    auto load = [&](std::size_t k) {
      const int s = int(k % kBulkStages);
      const std::size_t chunk = blockIdx.x + k * gridDim.x;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                       shared_address(&barrier[s])),
                   "r"(kBulkChunk));
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(shared_address(stage + s * kBulkChunk)),
          "l"(in + chunk * kBulkChunk), "r"(kBulkChunk), "r"(shared_address(&barrier[s]))
          : "memory");
    };
    for (std::size_t k = 0; k < mine && k < kBulkStages; ++k) load(k);
    for (std::size_t k = 0; k < mine; ++k) {
      const int s = int(k % kBulkStages);
      const unsigned parity = unsigned((k / kBulkStages) & 1);
      asm volatile(
          "{\n .reg .pred done;\n wait:\n"
          " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
          " @!done bra wait;\n}" ::"r"(shared_address(&barrier[s])),
          "r"(parity)
          : "memory");
      const std::size_t chunk = blockIdx.x + k * gridDim.x;
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                       out + chunk * kBulkChunk),
                   "r"(shared_address(stage + s * kBulkChunk)), "r"(kBulkChunk)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;");
      // Two stores in flight: refill the stage of chunk k - 1 once its store has read it.
      if (k >= 1 && k - 1 + kBulkStages < mine) {
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
        load(k - 1 + kBulkStages);
      }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  // What is not a whole chunk: every thread, plain copies.
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i =
           chunks * kBulkChunk / sizeof(uint4) + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
       i < vectors; i += stride) {
    dst[i] = src[i];
  }
#else
  __trap();  // launch_copy only picks this kernel where it was compiled for sm_90+
#endif
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

CopyPlan plan_copy(int sm_count) {
  const int sms = sm_count > 0 ? sm_count : 1;
  cudaFuncAttributes bulk{};
  GPUCLK_CUDA_CHECK(cudaFuncGetAttributes(&bulk, copy_bulk_kernel));
  int device = 0, major = 0;
  GPUCLK_CUDA_CHECK(cudaGetDevice(&device));
  GPUCLK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  // The bulk kernel only where its sm_90+ code is in this binary and the device runs it.
  if (major >= 9 && bulk.binaryVersion >= 90) {
    GPUCLK_CUDA_CHECK(cudaFuncSetAttribute(
        copy_bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBulkSharedBytes));
    return {sms, kBulkThreads, kBulkSharedBytes, true};
  }
  int blocks = 0;
  GPUCLK_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_kernel, kMemThreads, 0));
  return {std::max(1, blocks) * sms, kMemThreads, 0, false};
}

int triad_blocks_per_sm() {
  int blocks = 0;
  GPUCLK_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, triad_kernel, kMemThreads, 0));
  return blocks;
}

void launch_copy(void* dst, const void* src, std::size_t bytes, const CopyPlan& plan,
                 cudaStream_t stream) {
  auto* to = static_cast<uint4*>(dst);
  const auto* from = static_cast<const uint4*>(src);
  if (plan.bulk) {
    copy_bulk_kernel<<<unsigned(plan.blocks), unsigned(plan.threads),
                       std::size_t(plan.shared_bytes), stream>>>(to, from, bytes / sizeof(uint4));
  } else {
    copy_kernel<<<unsigned(plan.blocks), unsigned(plan.threads), 0, stream>>>(
        to, from, bytes / sizeof(uint4));
  }
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
