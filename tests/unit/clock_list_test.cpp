#include "gpu/clock_list.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuclk::gpu {

std::vector<units::Megahertz> h100_graphics_clocks() {
  std::vector<units::Megahertz> c;
  for (int f = 1980; f >= 345; f -= 15) c.emplace_back(f);
  return c;
}

TEST(clock_list_test, h100_supported_clocks_read_compactly) {
  EXPECT_EQ(describe_clocks(h100_graphics_clocks()), "345\u20131980 MHz, step 15, 110 values");
}

TEST(clock_list_test, irregular_lists_are_written_out) {
  EXPECT_EQ(describe_clocks({units::Megahertz(2619), units::Megahertz(1593)}), "1593, 2619 MHz");
  EXPECT_EQ(describe_clocks({}), "none");
}

// The V100's 7.5 MHz grid as NVML lists it, rounded down to whole MHz: 135, 142, 150, 157, …
std::vector<units::Megahertz> v100_graphics_clocks() {
  std::vector<units::Megahertz> c;
  for (int k = 186; k >= 0; --k) c.emplace_back(std::floor(135 + 7.5 * k));
  return c;
}

TEST(clock_list_test, a_grid_in_fractional_steps_reads_as_a_range) {
  const auto c = v100_graphics_clocks();
  ASSERT_EQ(c.size(), 187U);
  EXPECT_EQ(describe_clocks(c),
            "135\u20131530 MHz in 7\u20138 MHz steps (7.5 on average), 187 values");
  const auto s = summarize_clocks(c);
  EXPECT_DOUBLE_EQ(s.step.value(), 7.5);
  EXPECT_TRUE(s.step_rounded);
  EXPECT_EQ(s.count, 187U);
  EXPECT_FALSE(summarize_clocks(h100_graphics_clocks()).step_rounded);
}

TEST(clock_list_test, long_irregular_lists_read_as_runs) {
  std::vector<units::Megahertz> c;
  for (int f = 210; f <= 600; f += 15) c.emplace_back(f);
  c.emplace_back(1593);
  c.emplace_back(2619);
  EXPECT_EQ(describe_clocks(c), "210\u2013600 step 15, 1593, 2619 MHz");
}

TEST(clock_list_test, nearest_clock_rounds_to_a_supported_value) {
  auto c = h100_graphics_clocks();
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1412)).value(), 1410);
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1417.5)).value(), 1410);  // tie goes down
  EXPECT_EQ(nearest_clock(c, units::Megahertz(5000)).value(), 1980);
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1)).value(), 345);
}

}  // namespace gpuclk::gpu
