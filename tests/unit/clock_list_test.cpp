#include "gpu/clock_list.h"

#include <gtest/gtest.h>

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

TEST(clock_list_test, nearest_clock_rounds_to_a_supported_value) {
  auto c = h100_graphics_clocks();
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1412)).value(), 1410);
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1417.5)).value(), 1410);  // tie goes down
  EXPECT_EQ(nearest_clock(c, units::Megahertz(5000)).value(), 1980);
  EXPECT_EQ(nearest_clock(c, units::Megahertz(1)).value(), 345);
}

}  // namespace gpuclk::gpu
