#include <gtest/gtest.h>

#include <vector>

#include "bench/stats.h"

namespace gpuclk::bench {
namespace {

TEST(bench_stats_test, odd_count_median_is_the_middle_value) {
  const std::vector<double> rates = {5, 1, 4, 2, 3};
  const RateSummary s = summarize(rates);
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, 1.5811388300841898, 1e-12);
  EXPECT_DOUBLE_EQ(s.spread, 4.0 / 3.0);
}

TEST(bench_stats_test, even_count_median_is_the_mean_of_the_middle_two) {
  const std::vector<double> rates = {680e12, 690e12, 700e12, 670e12};
  EXPECT_DOUBLE_EQ(summarize(rates).median, 685e12);
}

TEST(bench_stats_test, single_value_has_no_spread) {
  const std::vector<double> rates = {3.0e12};
  const RateSummary s = summarize(rates);
  EXPECT_DOUBLE_EQ(s.median, 3.0e12);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.spread, 0);
}

TEST(bench_stats_test, empty_input_gives_zeros) {
  const RateSummary s = summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.spread, 0);
}

}  // namespace
}  // namespace gpuclk::bench
