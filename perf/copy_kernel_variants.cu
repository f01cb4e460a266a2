// Which device-copy kernel shape keeps up with cudaMemcpyAsync (what torch's dst.copy_(src) calls
// for a contiguous same-dtype copy)? Times variants of gpuclk bench's copy kernel (vectors per
// thread in flight, threads per block, blocks per SM, cache hints) against the driver's copy on the
// same buffers, interleaved, and prints one table of ratios. Read-only: no GPU setting is touched.
//   nvcc -O3 -std=c++17 -arch=sm_90 perf/copy_kernel_variants.cu -o build/copy_kernel_variants
//   build/copy_kernel_variants [MiB (1024)] [repetitions (40)]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

enum class Hint { none, streaming };

template <int kUnroll, Hint kHint>
__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                            size_t vectors) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = kHint == Hint::streaming ? __ldcs(src + i + u * stride) : src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (kHint == Hint::streaming)
        __stcs(dst + i + u * stride, v[u]);
      else
        dst[i + u * stride] = v[u];
    }
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}

// Not persistent: one block per threads x kUnroll vectors, no loop; the block scheduler spreads
// the 65 536 blocks of a 1 GiB copy over the SMs as they free up.
template <int kUnroll, Hint kHint>
__global__ void copy_oneshot(uint4* __restrict__ dst, const uint4* __restrict__ src,
                             size_t vectors) {
  const size_t base = size_t(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
  uint4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = base + size_t(u) * blockDim.x;
    if (i < vectors) v[u] = kHint == Hint::streaming ? __ldcs(src + i) : src[i];
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = base + size_t(u) * blockDim.x;
    if (i < vectors) {
      if (kHint == Hint::streaming)
        __stcs(dst + i, v[u]);
      else
        dst[i] = v[u];
    }
  }
}

// Loads with the L2::256B prefetch hint (the L2 fetches whole 256-byte sectors groups from DRAM).
__device__ __forceinline__ uint4 load_prefetch_256(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

template <int kUnroll>
__global__ void copy_prefetch(uint4* __restrict__ dst, const uint4* __restrict__ src,
                              size_t vectors) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_prefetch_256(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}

// TMA bulk copies (sm_90): one thread per block streams chunks global -> shared -> global with
// cp.async.bulk, kStages chunks in flight; the SMs' load/store units are not involved.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <int kStages, int kChunk, int kLag = 1>
__global__ void copy_bulk(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t vectors) {
  extern __shared__ __align__(128) unsigned char stage_mem[];
  __shared__ __align__(8) unsigned long long barrier[kStages];
  const size_t bytes = vectors * 16, chunks = bytes / kChunk;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&barrier[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
    const char* in = reinterpret_cast<const char*>(src);
    char* out = reinterpret_cast<char*>(dst);
    // This block's chunks: blockIdx.x, blockIdx.x + gridDim.x, ...
    const size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    auto load = [&](size_t k) {
      const int s = int(k % kStages);
      const size_t c = blockIdx.x + k * gridDim.x;
      asm volatile(
          "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&barrier[s])),
          "r"(kChunk));
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(smem_addr(stage_mem + s * kChunk)),
          "l"(in + c * kChunk), "r"(kChunk), "r"(smem_addr(&barrier[s]))
          : "memory");
    };
    for (size_t k = 0; k < mine && k < kStages; ++k) load(k);
    for (size_t k = 0; k < mine; ++k) {
      const int s = int(k % kStages);
      const unsigned parity = unsigned((k / kStages) & 1);
      asm volatile(
          "{\n .reg .pred done;\n wait:\n"
          " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
          " @!done bra wait;\n}" ::"r"(smem_addr(&barrier[s])),
          "r"(parity)
          : "memory");
      const size_t c = blockIdx.x + k * gridDim.x;
      asm volatile(
          "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + c * kChunk),
          "r"(smem_addr(stage_mem + s * kChunk)), "r"(kChunk)
          : "memory");
      asm volatile("cp.async.bulk.commit_group;");
      // Refill the stage of chunk k - kLag + 1 once its store has read it (kLag stores in flight).
      if (k + 1 >= kLag && k + 1 - kLag + kStages < mine) {
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kLag - 1) : "memory");
        load(k + 1 - kLag + kStages);
      }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  // The tail that is not a whole chunk: all threads, plain copies.
  const size_t tail = chunks * kChunk / 16;
  for (size_t i = tail + size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Block-contiguous: each block copies one contiguous chunk (fewer DRAM page switches).
template <int kUnroll>
__global__ void copy_chunked(uint4* __restrict__ dst, const uint4* __restrict__ src,
                             size_t vectors) {
  const size_t per_block = (vectors + gridDim.x - 1) / gridDim.x;
  const size_t begin = size_t(blockIdx.x) * per_block;
  const size_t end = begin + per_block < vectors ? begin + per_block : vectors;
  size_t i = begin + threadIdx.x;
  for (; i + (kUnroll - 1) * blockDim.x < end; i += kUnroll * blockDim.x) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * blockDim.x, v[u]);
  }
  for (; i < end; i += blockDim.x) dst[i] = src[i];
}

struct Variant {
  const char* name;
  void (*kernel)(uint4*, const uint4*, size_t);
  int threads;
  int blocks_per_sm;          // 0: as many as fit
  int shared_bytes = 0;       // dynamic shared memory per block
  int vectors_per_block = 0;  // not 0: a one-shot grid of vectors / this many blocks
};

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 40;
  const size_t bytes = mib << 20, vectors = bytes / 16;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint4 *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));

  std::vector<Variant> variants = {
      {"grid-stride u4 256t (gpuclk today)", copy_kernel<4, Hint::none>, 256, 0},
      {"grid-stride u8 256t", copy_kernel<8, Hint::none>, 256, 0},
      {"grid-stride u16 256t", copy_kernel<16, Hint::none>, 256, 0},
      {"grid-stride u4 256t streaming", copy_kernel<4, Hint::streaming>, 256, 0},
      {"grid-stride u8 256t streaming", copy_kernel<8, Hint::streaming>, 256, 0},
      {"grid-stride u8 512t streaming", copy_kernel<8, Hint::streaming>, 512, 0},
      {"grid-stride u8 1024t streaming", copy_kernel<8, Hint::streaming>, 1024, 0},
      {"grid-stride u16 256t streaming", copy_kernel<16, Hint::streaming>, 256, 0},
      {"grid-stride u8 256t 4 blk/SM str.", copy_kernel<8, Hint::streaming>, 256, 4},
      {"grid-stride u16 1024t streaming", copy_kernel<16, Hint::streaming>, 1024, 0},
      {"grid-stride u8 1024t 2 blk/SM str.", copy_kernel<8, Hint::streaming>, 1024, 2},
      {"grid-stride u4 1024t streaming", copy_kernel<4, Hint::streaming>, 1024, 0},
      {"prefetch-256 u4 256t", copy_prefetch<4>, 256, 0},
      {"prefetch-256 u8 512t", copy_prefetch<8>, 512, 0},
      {"prefetch-256 u8 1024t", copy_prefetch<8>, 1024, 0},
      {"prefetch-256 u8 1024t 2 blk/SM", copy_prefetch<8>, 1024, 2},
      {"prefetch-256 u16 1024t", copy_prefetch<16>, 1024, 0},
      {"bulk 4 x 16 KiB, 1 blk/SM", copy_bulk<4, 16384>, 32, 1, 4 * 16384},
      {"bulk 4 x 32 KiB, 1 blk/SM", copy_bulk<4, 32768>, 32, 1, 4 * 32768},
      {"bulk 6 x 32 KiB, 1 blk/SM", copy_bulk<6, 32768>, 32, 1, 6 * 32768},
      {"bulk 4 x 16 KiB, 2 blk/SM", copy_bulk<4, 16384>, 32, 2, 4 * 16384},
      {"bulk 3 x 32 KiB, 2 blk/SM", copy_bulk<3, 32768>, 32, 2, 3 * 32768},
      {"bulk 8 x 8 KiB, 4 blk/SM", copy_bulk<8, 8192>, 32, 4, 8 * 8192},
      {"bulk 3 x 64 KiB, 1 blk/SM", copy_bulk<3, 65536>, 32, 1, 3 * 65536},
      {"bulk 13 x 16 KiB, 1 blk/SM", copy_bulk<13, 16384>, 32, 1, 13 * 16384},
      {"bulk 6 x 32 KiB lag 2, 1 blk/SM", copy_bulk<6, 32768, 2>, 32, 1, 6 * 32768},
      {"bulk 6 x 32 KiB lag 3, 1 blk/SM", copy_bulk<6, 32768, 3>, 32, 1, 6 * 32768},
      {"bulk 12 x 16 KiB lag 4, 1 blk/SM", copy_bulk<12, 16384, 4>, 32, 1, 12 * 16384},
      {"bulk 4 x 24 KiB lag 2, 2 blk/SM", copy_bulk<4, 24576, 2>, 32, 2, 4 * 24576},
      {"bulk 6 x 16 KiB lag 2, 2 blk/SM", copy_bulk<6, 16384, 2>, 32, 2, 6 * 16384},
      {"chunked u4 256t", copy_chunked<4>, 256, 0},
      {"chunked u8 256t", copy_chunked<8>, 256, 0},
      {"chunked u8 512t", copy_chunked<8>, 512, 0},
      {"one-shot u4 256t", copy_oneshot<4, Hint::none>, 256, 0, 0, 4 * 256},
      {"one-shot u4 256t streaming", copy_oneshot<4, Hint::streaming>, 256, 0, 0, 4 * 256},
      {"one-shot u8 256t streaming", copy_oneshot<8, Hint::streaming>, 256, 0, 0, 8 * 256},
      {"one-shot u4 512t streaming", copy_oneshot<4, Hint::streaming>, 512, 0, 0, 4 * 512},
      {"one-shot u2 512t", copy_oneshot<2, Hint::none>, 512, 0, 0, 2 * 512},
      {"one-shot u8 128t streaming", copy_oneshot<8, Hint::streaming>, 128, 0, 0, 8 * 128},
      {"one-shot u16 128t streaming", copy_oneshot<16, Hint::streaming>, 128, 0, 0, 16 * 128},
      {"one-shot u1 1024t", copy_oneshot<1, Hint::none>, 1024, 0, 0, 1024},
  };
  // argv[3]: run only the variants whose name contains it.
  if (argc > 3) {
    std::vector<Variant> chosen;
    for (const auto& v : variants)
      if (std::strstr(v.name, argv[3])) chosen.push_back(v);
    variants = chosen;
  }
  auto time_memcpy = [&] {
    CHECK(cudaEventRecord(a, stream));
    for (int r = 0; r < reps; ++r)
      CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return 2.0 * bytes * reps / (ms * 1e-3);
  };
  // Warm up the clocks and the memcpy path.
  for (int i = 0; i < 5; ++i) time_memcpy();
  std::printf(
      "# %zu MiB, %d repetitions per timing, %d SMs; rate = 2 x bytes / time (read + write)\n", mib,
      reps, sms);
  std::printf("%-38s %6s %10s %12s %12s %8s\n", "variant", "grid", "blk/SM", "kernel TB/s",
              "memcpy TB/s", "ratio");
  for (const Variant& v : variants) {
    int fit = 0;
    if (v.shared_bytes > 48 * 1024)
      CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 v.shared_bytes));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, v.kernel, v.threads, v.shared_bytes));
    if (fit == 0) {  // too many registers for this block size
      std::printf("%-38s does not fit on an SM\n", v.name);
      continue;
    }
    const int per_sm = v.blocks_per_sm ? std::min(v.blocks_per_sm, fit) : fit;
    const int grid = v.vectors_per_block
                         ? int((vectors + v.vectors_per_block - 1) / v.vectors_per_block)
                         : per_sm * sms;
    double best_kernel = 0, best_copy = 0;
    for (int round = 0; round < 3; ++round) {  // interleaved: kernel, memcpy, kernel, ...
      v.kernel<<<grid, v.threads, v.shared_bytes, stream>>>(dst, src, vectors);  // warm-up launch
      CHECK(cudaEventRecord(a, stream));
      for (int r = 0; r < reps; ++r)
        v.kernel<<<grid, v.threads, v.shared_bytes, stream>>>(dst, src, vectors);
      CHECK(cudaEventRecord(b, stream));
      CHECK(cudaEventSynchronize(b));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      best_kernel = std::max(best_kernel, 2.0 * bytes * reps / (ms * 1e-3));
      best_copy = std::max(best_copy, time_memcpy());
    }
    // Check the kernel's copy: fill dst with another byte, run once, compare with src.
    CHECK(cudaMemsetAsync(dst, 7, bytes, stream));
    v.kernel<<<grid, v.threads, v.shared_bytes, stream>>>(dst, src, vectors);
    CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> head(1 << 20), tail(1 << 20);
    CHECK(cudaMemcpy(head.data(), dst, head.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(tail.data(), reinterpret_cast<char*>(dst) + bytes - tail.size(), tail.size(),
                     cudaMemcpyDeviceToHost));
    const bool ok = std::all_of(head.begin(), head.end(), [](unsigned char c) { return c == 1; }) &&
                    std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return c == 1; });
    std::printf("%-38s %6d %10d %12.3f %12.3f %8.3f%s\n", v.name, grid, per_sm, best_kernel / 1e12,
                best_copy / 1e12, best_kernel / best_copy, ok ? "" : "  WRONG RESULT");
  }
  return 0;
}
