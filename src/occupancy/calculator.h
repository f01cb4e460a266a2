// Theoretical occupancy of one kernel launch on one SM: how many blocks of the kernel an SM
// holds at once, which resources stop it from holding more, and whether the launch is possible
// at all. Pure arithmetic over ArchLimits; gives the same block counts as NVIDIA's occupancy
// calculator (cudaOccMaxActiveBlocksPerMultiprocessor) for one block barrier per kernel, no
// partitioned global caching and the shared-memory opt-in set whenever a block needs it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "occupancy/arch_limits.h"

namespace gpuclk::occupancy {

// What the kernel asks for, per block and per thread.
struct KernelConfig {
  int threads_per_block = 0;                     // 1..; any value, not only multiples of 32
  int registers_per_thread = 0;                  // 0..255, as ptxas/cuobjdump report them
  std::int64_t static_shared_bytes = 0;          // __shared__ arrays, per block
  std::int64_t dynamic_shared_bytes = 0;         // the launch's third <<<>>> argument, per block
  std::optional<int> launch_bounds_max_threads;  // __launch_bounds__(N): blocks above N fail
  // L1/shared split requested with cudaFuncAttributePreferredSharedMemoryCarveout, percent
  // 0..100 of the largest shared-memory size; nullopt = driver default (largest). Ignored
  // before sm_70, where shared memory does not share an array with L1.
  std::optional<int> carveout_percent;

  std::int64_t total_shared_bytes() const { return static_shared_bytes + dynamic_shared_bytes; }
};

// The resources that can cap resident blocks. Several can bind at once (all give the same count).
enum class Limiter { warps, blocks, registers, shared_memory };
inline constexpr Limiter kAllLimiters[] = {Limiter::warps, Limiter::blocks, Limiter::registers,
                                           Limiter::shared_memory};
std::string_view to_string(Limiter limiter);  // "warps", "blocks", "registers", "shared_memory"

// Why a launch cannot run at all. The CUDA runtime fails such launches with
// cudaErrorInvalidValue or cudaErrorLaunchOutOfResources.
enum class InvalidReason {
  block_above_device_maximum,          // threads > max_threads_per_block (1024)
  block_above_launch_bounds,           // threads > __launch_bounds__ maximum
  registers_per_thread_above_maximum,  // registers > 255
  registers_per_block_above_maximum,   // allocated registers of a block > per-block maximum
  static_shared_above_maximum,         // __shared__ arrays above 48 KiB
  shared_per_block_above_maximum,      // static + dynamic above the opt-in maximum
};
std::string_view to_string(InvalidReason reason);  // "block_above_device_maximum", …

// Ceiling on blocks per SM from one resource. nullopt: the resource does not limit (no
// registers or no shared memory used).
using BlockLimit = std::optional<int>;

struct Occupancy {
  std::vector<InvalidReason> invalid_reasons;  // empty for a launch that can run
  std::string invalid_detail;  // one sentence naming the values, for invalid launches

  int warps_per_block = 0;                            // threads rounded up to whole warps
  int allocated_registers_per_block = 0;              // after per-warp rounding
  std::int64_t allocated_shared_bytes_per_block = 0;  // incl. the reserved 1 KiB, rounded
  std::int64_t shared_bytes_per_sm = 0;  // the carveout the blocks were counted against
  bool needs_shared_optin = false;       // static + dynamic > 48 KiB: cudaFuncSetAttribute needed

  int blocks_by_warps = 0;
  int blocks_by_blocks = 0;
  BlockLimit blocks_by_registers;
  BlockLimit blocks_by_shared_memory;

  int active_blocks = 0;          // per SM; 0 for an invalid launch
  int active_warps = 0;           // per SM
  int active_threads = 0;         // per SM: active_blocks × threads_per_block
  int max_warps = 0;              // per SM, the architecture's maximum
  std::vector<Limiter> limiters;  // every resource whose ceiling equals active_blocks

  bool valid() const { return invalid_reasons.empty(); }
  double occupancy() const { return max_warps ? double(active_warps) / max_warps : 0.0; }
  bool limited_by(Limiter limiter) const;
};

// Throws gpuclk::Error(bad_argument) for inputs that are not a kernel at all (threads < 1,
// negative registers or bytes, launch bounds < 1, carveout outside 0..100). A kernel that is
// well formed but cannot launch comes back with invalid_reasons set, not as an exception.
Occupancy calculate(const ArchLimits& arch, const KernelConfig& kernel);

}  // namespace gpuclk::occupancy
