// The arithmetic of the FMA workload, shared by the kernel and the host check so that both follow
// the same recurrence: each thread runs kFmaChains chains x ← fma(x, a, b), kFmaUnroll steps per
// loop trip, then writes the chains' sum.
#pragma once

#include <cstdint>

#include "bench/random.h"  // GPUCLK_HOST_DEVICE

namespace gpuclk::bench {

inline constexpr int kFmaChains = 8;   // independent chains: enough to hide FMA latency
inline constexpr int kFmaUnroll = 32;  // steps per loop trip: loop overhead ~1 % of issue slots
inline constexpr int kFmaPerIteration = kFmaChains * kFmaUnroll;

// |a| just below 1 with b tiny: values neither blow up nor settle, so the data keeps toggling.
inline constexpr float kFmaMultiplier = -0.99999994f;
inline constexpr float kFmaAddend = 1e-7f;

// Start value of chain `chain` of thread `thread`: in [0.5, 1), exact in float.
GPUCLK_HOST_DEVICE inline float fma_initial_value(std::uint64_t thread, int chain) {
  return 0.5f + float((thread * kFmaChains + std::uint64_t(chain)) % 1024) * (1.0f / 2048);
}

}  // namespace gpuclk::bench
