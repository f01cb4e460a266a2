#include <gtest/gtest.h>

#include "occupancy/sweep.h"

namespace gpuclk::occupancy {
namespace {

KernelConfig kernel(int registers, std::int64_t dynamic_shared = 0) {
  KernelConfig config;
  config.registers_per_thread = registers;
  config.dynamic_shared_bytes = dynamic_shared;
  return config;
}

TEST(occupancy_sweep_test, tries_every_warp_multiple_up_to_1024) {
  const Sweep result = sweep(*parse_architecture("sm_90"), kernel(32));
  ASSERT_EQ(result.points.size(), 32u);
  EXPECT_EQ(result.points.front().threads_per_block, 32);
  EXPECT_EQ(result.points.back().threads_per_block, 1024);
}

TEST(occupancy_sweep_test, launch_bounds_cap_the_sizes_and_add_the_bound_itself) {
  KernelConfig config = kernel(32);
  config.launch_bounds_max_threads = 100;
  EXPECT_EQ(sweep_block_sizes(*parse_architecture("sm_80"), config),
            (std::vector<int>{32, 64, 96, 100}));
  config.launch_bounds_max_threads = 20;
  EXPECT_EQ(sweep_block_sizes(*parse_architecture("sm_80"), config), std::vector<int>{20});
}

TEST(occupancy_sweep_test, equal_occupancy_picks_the_largest_block_like_cuda) {
  // Every size from 64 up fills an H100 SM at 32 registers; CUDA keeps the largest.
  const Sweep result = sweep(*parse_architecture("sm_90"), kernel(32));
  EXPECT_EQ(result.best_threads_per_block, 1024);
  EXPECT_EQ(result.best_active_blocks, 2);
  ASSERT_NE(result.best(), nullptr);
  EXPECT_DOUBLE_EQ(result.best()->occupancy.occupancy(), 1.0);
}

TEST(occupancy_sweep_test, picks_the_size_that_holds_the_most_threads) {
  // 72 registers on an A100: 2304 per warp, 7 warps per sub-partition, 28 per SM.
  // 224 threads (7 warps) × 4 blocks = 896 threads; 1024 would not fit at all.
  const Sweep result = sweep(*parse_architecture("sm_80"), kernel(72));
  EXPECT_EQ(result.best_threads_per_block, 896);
  EXPECT_EQ(result.best_active_blocks, 1);
  EXPECT_FALSE(result.points.back().occupancy.valid());
}

TEST(occupancy_sweep_test, reports_no_best_size_when_nothing_launches) {
  const Sweep result = sweep(*parse_architecture("sm_90"), kernel(32, 300 * 1024));
  EXPECT_EQ(result.best_threads_per_block, 0);
  EXPECT_EQ(result.best(), nullptr);
}

}  // namespace
}  // namespace gpuclk::occupancy
