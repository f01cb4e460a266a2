#include "occupancy/sweep.h"

#include <algorithm>

namespace gpuclk::occupancy {

const SweepPoint* Sweep::best() const {
  for (const SweepPoint& point : points) {
    if (point.threads_per_block == best_threads_per_block) return &point;
  }
  return nullptr;
}

std::vector<int> sweep_block_sizes(const ArchLimits& arch, const KernelConfig& kernel) {
  int limit = arch.max_threads_per_block;
  if (kernel.launch_bounds_max_threads) limit = std::min(limit, *kernel.launch_bounds_max_threads);
  std::vector<int> sizes;
  for (int threads = arch.warp_size; threads <= limit; threads += arch.warp_size) {
    sizes.push_back(threads);
  }
  if (sizes.empty() || sizes.back() != limit) sizes.push_back(limit);
  return sizes;
}

Sweep sweep(const ArchLimits& arch, KernelConfig kernel) {
  Sweep result;
  for (int threads : sweep_block_sizes(arch, kernel)) {
    kernel.threads_per_block = threads;
    result.points.push_back({threads, calculate(arch, kernel)});
  }
  // cudaOccupancyMaxPotentialBlockSize walks from the largest size down and keeps a size only
  // if it holds strictly more threads, so among equals the largest block wins.
  int best_threads = 0;
  for (auto point = result.points.rbegin(); point != result.points.rend(); ++point) {
    if (point->occupancy.active_threads > best_threads) {
      best_threads = point->occupancy.active_threads;
      result.best_threads_per_block = point->threads_per_block;
      result.best_active_blocks = point->occupancy.active_blocks;
    }
  }
  return result;
}

}  // namespace gpuclk::occupancy
