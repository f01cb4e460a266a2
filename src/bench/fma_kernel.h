// The FMA-throughput kernel (fma_kernel.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuclk::bench::detail {

inline constexpr int kFmaThreads = 256;

// Resident blocks of kFmaThreads per SM (one full wave).
int fma_blocks_per_sm();

// out[t] = sum of thread t's chains after `iterations` loop trips (see fma_math.h). Async.
void launch_fma(float* out, std::int64_t iterations, float multiplier, float addend, int blocks,
                cudaStream_t stream);

}  // namespace gpuclk::bench::detail
