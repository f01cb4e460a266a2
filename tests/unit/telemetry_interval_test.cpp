#include <gtest/gtest.h>

#include "telemetry/interval.h"

namespace gpuclk::telemetry {
namespace {

TEST(telemetry_interval_test, accepts_seconds_and_milliseconds) {
  EXPECT_EQ(parse_interval("1"), std::chrono::seconds(1));
  EXPECT_EQ(parse_interval("0.1"), std::chrono::milliseconds(100));
  EXPECT_EQ(parse_interval("100ms"), std::chrono::milliseconds(100));
  EXPECT_EQ(parse_interval("2s"), std::chrono::seconds(2));
  EXPECT_EQ(parse_interval("10ms"), std::chrono::milliseconds(10));
  EXPECT_EQ(parse_interval("2m"), std::chrono::minutes(2));
  EXPECT_EQ(parse_interval("1h"), std::chrono::hours(1));
}

TEST(telemetry_interval_test, rejects_too_short_and_garbage) {
  EXPECT_FALSE(parse_interval("5ms"));
  EXPECT_FALSE(parse_interval("0"));
  EXPECT_FALSE(parse_interval("-1"));
  EXPECT_FALSE(parse_interval("fast"));
  EXPECT_FALSE(parse_interval("25h"));
  EXPECT_FALSE(parse_interval("1e3"));
  EXPECT_FALSE(parse_interval(""));
}

}  // namespace
}  // namespace gpuclk::telemetry
