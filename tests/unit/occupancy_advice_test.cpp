#include <gtest/gtest.h>

#include <algorithm>

#include "occupancy/advice.h"

namespace gpuclk::occupancy {
namespace {

const ArchLimits& h100() { return *parse_architecture("sm_90"); }

KernelConfig kernel(int threads, int registers, std::int64_t dynamic_shared = 0) {
  KernelConfig config;
  config.threads_per_block = threads;
  config.registers_per_thread = registers;
  config.dynamic_shared_bytes = dynamic_shared;
  return config;
}

std::vector<std::string> texts(const ArchLimits& arch, const KernelConfig& config) {
  std::vector<std::string> lines;
  for (const Advice& advice : advise(arch, config, calculate(arch, config))) {
    lines.push_back(advice.text);
  }
  return lines;
}

TEST(occupancy_advice_test, register_limited_kernel_gets_the_first_and_the_best_register_count) {
  EXPECT_EQ(texts(h100(), kernel(256, 64)),
            (std::vector<std::string>{
                "≤ 48 registers per thread → 62.5 % (5 blocks per SM): __launch_bounds__(256, 5) "
                "or -maxrregcount=48",
                "≤ 32 registers per thread → 100 % (8 blocks per SM): __launch_bounds__(256, 8) "
                "or -maxrregcount=32"}));
}

TEST(occupancy_advice_test, warp_limited_192_thread_block_is_told_256) {
  // 192 threads = 6 warps: 10 blocks hold 60 of 64 warps.
  EXPECT_EQ(texts(h100(), kernel(192, 32)),
            std::vector<std::string>{"block 256 instead of 192 → 100 % (8 blocks per SM)"});
}

TEST(occupancy_advice_test, shared_memory_limited_kernel_gets_the_sizes_that_add_blocks) {
  const auto lines = texts(h100(), kernel(256, 32, 100 * 1024));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "shared memory ≤ 75 KiB per block → 37.5 % (3 blocks per SM)");
  EXPECT_EQ(lines[1], "shared memory ≤ 28160 bytes per block → 100 % (8 blocks per SM)");
  // The same shared memory shared by more threads (sizes are per block, whatever its size).
  EXPECT_EQ(lines[2],
            "block 1024 instead of 256 (if shared memory per block stays the same) "
            "→ 100 % (2 blocks per SM)");
}

TEST(occupancy_advice_test, full_occupancy_needs_no_advice) {
  EXPECT_TRUE(texts(h100(), kernel(256, 32)).empty());
}

TEST(occupancy_advice_test, partial_warp_block_is_told_the_next_multiple_of_32) {
  EXPECT_EQ(texts(h100(), kernel(250, 32)),
            std::vector<std::string>{"block 256 instead of 250: a multiple of 32 threads, same "
                                     "warps, 6 idle lanes per block put to work → 100 % (8 "
                                     "blocks per SM)"});
}

TEST(occupancy_advice_test, invalid_launch_is_told_what_makes_it_launch) {
  const KernelConfig config = kernel(1024, 128);
  const auto advice = advise(h100(), config, calculate(h100(), config));
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice.front().kind, AdviceKind::fewer_registers);
  EXPECT_EQ(advice.front().changed.registers_per_thread, 64);
  EXPECT_TRUE(advice.front().result.valid());
  bool has_block_size = false;
  for (const Advice& item : advice) has_block_size |= item.kind == AdviceKind::block_size;
  EXPECT_TRUE(has_block_size);
}

TEST(occupancy_advice_test, low_carveout_preference_is_named) {
  KernelConfig config = kernel(256, 32, 32 * 1024);
  config.carveout_percent = 25;
  const auto lines = texts(h100(), config);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "no carveout preference instead of 25 % → 75 % (6 blocks per SM)"),
            lines.end());
}

TEST(occupancy_advice_test, formats_bytes_and_percentages_for_people) {
  EXPECT_EQ(format_bytes(48 * 1024), "48 KiB");
  EXPECT_EQ(format_bytes(1000), "1000 bytes");
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_percent(0.75), "75 %");
  EXPECT_EQ(format_percent(0.9375), "93.8 %");
  EXPECT_EQ(format_percent(1.0), "100 %");
}

}  // namespace
}  // namespace gpuclk::occupancy
