// Device kernels of the memory workload (mem_kernels.cu). All launches are async on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpuclk::bench::detail {

// Fills `words` 32-bit words with random bits from stream `seed`.
void fill_random_words(std::uint32_t* data, std::size_t words, std::uint64_t seed,
                       cudaStream_t stream);

// Fills `count` floats uniform in [-1, 1) from stream `seed`.
void fill_random_floats(float* data, std::size_t count, std::uint64_t seed, cudaStream_t stream);

inline constexpr int kMemThreads = 256;

// The copy kernel's grid for `bytes`: one 16-byte vector per thread, one block per
// `threads` vectors.
struct CopyPlan {
  int blocks = 0;
  int threads = 0;
};
CopyPlan plan_copy(std::size_t bytes);

// dst = src, `bytes` a multiple of 16, as `plan` says.
void launch_copy(void* dst, const void* src, std::size_t bytes, const CopyPlan& plan,
                 cudaStream_t stream);

// Resident blocks of kMemThreads per SM for the triad kernel (one full wave).
int triad_blocks_per_sm();

// a[i] = fma(scalar, c[i], b[i]) for i < count (count a multiple of 4).
void launch_triad(float* a, const float* b, const float* c, float scalar, std::size_t count,
                  int blocks, cudaStream_t stream);

// Adds to *mismatches the number of 32-bit words where x and y differ.
void count_copy_mismatches(const std::uint32_t* x, const std::uint32_t* y, std::size_t words,
                           unsigned long long* mismatches, cudaStream_t stream);

// Adds to *mismatches the number of i where a[i] != fma(scalar, c[i], b[i]) bit for bit.
void count_triad_mismatches(const float* a, const float* b, const float* c, float scalar,
                            std::size_t count, unsigned long long* mismatches, cudaStream_t stream);

}  // namespace gpuclk::bench::detail
