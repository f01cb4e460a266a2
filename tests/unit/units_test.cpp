#include "gpu/units.h"

#include <gtest/gtest.h>

namespace gpuclk::units {

TEST(units_test, milliwatts_convert_once_to_watts) {
  EXPECT_DOUBLE_EQ(from_milliwatts(700000).value(), 700.0);
  EXPECT_EQ(to_milliwatts(Watts(412.3456)), 412346u);
}

TEST(units_test, millijoules_convert_to_joules) {
  EXPECT_DOUBLE_EQ(from_millijoules(2828600).value(), 2828.6);
}

TEST(units_test, power_over_seconds_is_energy) {
  EXPECT_DOUBLE_EQ(energy_over(Watts(700), 6.0).value(), 4200.0);
  EXPECT_DOUBLE_EQ((Watts(700) * 0.5).value(), 350.0);  // scaling stays a power
}

TEST(units_test, quantities_compare_and_divide_to_ratio) {
  EXPECT_LT(Megahertz(1410), Megahertz(1980));
  EXPECT_NEAR(Megahertz(1410) / Megahertz(1980), 0.712, 1e-3);
  EXPECT_DOUBLE_EQ(hertz(Megahertz(1980)), 1.98e9);
  EXPECT_DOUBLE_EQ(from_percent(93).value(), 0.93);
}

}  // namespace gpuclk::units
