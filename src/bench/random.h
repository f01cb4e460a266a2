// Counter-based random numbers shared by host and device code, so a check can recompute any
// input element from its index.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUCLK_HOST_DEVICE __host__ __device__
#else
#define GPUCLK_HOST_DEVICE
#endif

namespace gpuclk::bench {

// SplitMix64: advances `state` and returns the next 64 random bits.
GPUCLK_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 64 random bits for element `index` of stream `seed`.
GPUCLK_HOST_DEVICE inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t state = seed ^ (index * 0xd1342543de82ef95ULL);
  return splitmix64(state);
}

// Uniform in [-1, 1) with 24 random bits: exactly representable in float.
GPUCLK_HOST_DEVICE inline float random_signed_unit(std::uint64_t seed, std::uint64_t index) {
  const auto bits = static_cast<std::uint32_t>(random_bits(seed, index) >> 40);  // 24 bits
  return static_cast<float>(static_cast<std::int32_t>(bits) - (1 << 23)) * (1.0f / (1 << 23));
}

}  // namespace gpuclk::bench
