#include <gtest/gtest.h>

#include "telemetry/interval.h"
#include "util/error.h"

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

TEST(telemetry_interval_test, an_interval_option_names_itself_in_its_error) {
  EXPECT_EQ(interval_option("250ms", "-d"), std::chrono::milliseconds(250));
  try {
    interval_option("1ms", "--interval");
    FAIL() << "1ms is below the shortest interval";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_STREQ(e.what(), "bad interval --interval 1ms");
    EXPECT_EQ(e.hint(), "give seconds (0.1) or milliseconds (100ms), at least 10ms");
  }
}

TEST(telemetry_interval_test, a_duration_option_is_the_one_parser_rounded_to_a_tick) {
  EXPECT_EQ(duration_option("90m", "--history", 60, 7 * 86400, "1h"), std::chrono::minutes(90));
  EXPECT_EQ(duration_option("0.5", "-d", 0.1, 3600, "1"), std::chrono::milliseconds(500));
  try {
    duration_option("30s", "--history", 60, 7 * 86400, "3600s, 90m, 1h");
    FAIL() << "30s is below --history's minute";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_STREQ(e.what(), "bad --history '30s'");
    EXPECT_EQ(e.hint(),
              "give a duration from 1m to 168h, e.g. 3600s, 90m, 1h (units: ms, s, m, h; a bare "
              "number is seconds)");
  }
}

}  // namespace
}  // namespace gpuclk::telemetry
