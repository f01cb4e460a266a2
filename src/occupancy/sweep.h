// Occupancy for every block size a kernel can launch with, and the best one — chosen the way
// cudaOccupancyMaxPotentialBlockSize chooses: the most resident threads per SM, ties going to
// the larger block.
#pragma once

#include <vector>

#include "occupancy/arch_limits.h"
#include "occupancy/calculator.h"

namespace gpuclk::occupancy {

struct SweepPoint {
  int threads_per_block = 0;
  Occupancy occupancy;
};

struct Sweep {
  std::vector<SweepPoint> points;  // ascending block size: 32, 64, …, and the limit itself
  int best_threads_per_block = 0;  // 0 when no block size can launch (registers, shared memory)
  int best_active_blocks = 0;      // per SM, at the best block size

  const SweepPoint* best() const;  // nullptr when best_threads_per_block is 0
};

// Block sizes from 32 to min(device maximum, launch bounds) in steps of a warp, plus that limit
// when it is not a multiple of 32. kernel.threads_per_block is ignored.
std::vector<int> sweep_block_sizes(const ArchLimits& arch, const KernelConfig& kernel);

// Throws like calculate() for malformed inputs.
Sweep sweep(const ArchLimits& arch, KernelConfig kernel);

}  // namespace gpuclk::occupancy
