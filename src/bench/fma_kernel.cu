// Peak FP32 issue: every instruction in the loop body is an FMA on registers, with kFmaChains
// independent chains per thread so the FMA pipes never wait on a result.
#include "bench/detail/cuda_check.h"
#include "bench/fma_kernel.h"
#include "bench/fma_math.h"

namespace gpuclk::bench::detail {

namespace {

// `multiplier` and `addend` arrive as parameters so the compiler cannot fold the chains.
__global__ void fma_kernel(float* out, std::int64_t iterations, float multiplier, float addend) {
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float x[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) x[j] = fma_initial_value(thread, j);
  // A 32-bit counter: one instruction per trip fewer than a 64-bit one (validate() caps it).
  for (int i = 0; i < int(iterations); ++i) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < kFmaChains; ++j) x[j] = __fmaf_rn(x[j], multiplier, addend);
    }
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) sum += x[j];
  out[thread] = sum;
}

}  // namespace

int fma_blocks_per_sm() {
  int blocks = 0;
  GPUCLK_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fma_kernel, kFmaThreads, 0));
  return blocks;
}

void launch_fma(float* out, std::int64_t iterations, float multiplier, float addend, int blocks,
                cudaStream_t stream) {
  fma_kernel<<<unsigned(blocks), kFmaThreads, 0, stream>>>(out, iterations, multiplier, addend);
  GPUCLK_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuclk::bench::detail
