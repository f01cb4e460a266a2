#include "gpu/reading.h"

#include <gtest/gtest.h>

#include "gpu/units.h"

namespace gpuclk::gpu {

TEST(reading_test, holds_a_value) {
  Reading<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.status(), ReadStatus::ok);
}

TEST(reading_test, not_supported_is_data_not_an_error) {
  auto r = Reading<int>::not_supported();
  EXPECT_FALSE(r);
  EXPECT_EQ(r.status(), ReadStatus::not_supported);
  EXPECT_EQ(r.value_or(7), 7);
  EXPECT_THROW(r.value(), std::logic_error);
}

TEST(reading_test, error_keeps_the_nvml_code) {
  auto r = Reading<int>::error(15);
  EXPECT_EQ(r.status(), ReadStatus::error);
  EXPECT_EQ(r.error_code(), 15);
}

TEST(reading_test, map_converts_values_and_keeps_missing_missing) {
  Reading<unsigned> mhz = 1980u;
  auto converted = mhz.map([](unsigned v) { return units::Megahertz(v); });
  EXPECT_DOUBLE_EQ(converted->value(), 1980.0);
  auto lost = Reading<unsigned>::error(15).map([](unsigned v) { return double(v); });
  EXPECT_EQ(lost.status(), ReadStatus::error);
  EXPECT_EQ(lost.error_code(), 15);
  auto absent = Reading<unsigned>::not_supported().map([](unsigned v) { return double(v); });
  EXPECT_EQ(absent.status(), ReadStatus::not_supported);
}

}  // namespace gpuclk::gpu
