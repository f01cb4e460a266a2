// sweep/repeat.h: the point's rate and spread over several runs or measured windows.
#include <gtest/gtest.h>

#include "sweep/repeat.h"

namespace gpuclk::sweep {
namespace {

TEST(sweep_repeat_test, median_of_odd_and_even_counts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(sweep_repeat_test, spread_is_range_over_reference) {
  EXPECT_FALSE(relative_spread({5}, 5));
  EXPECT_FALSE(relative_spread({}, 5));
  EXPECT_FALSE(relative_spread({4, 6}, 0));
  EXPECT_DOUBLE_EQ(*relative_spread({4, 6, 5}, 5), 0.4);
  EXPECT_DOUBLE_EQ(*relative_spread({5, 5}, 5), 0);
}

TEST(sweep_repeat_test, window_rates_split_pieces_by_start) {
  // Three windows of 1 s: 10/s, then 20/s, then 30/s; pieces of 0.5 s.
  std::vector<TimedWork> pieces = {{0.0, 0.5, 5},  {0.5, 0.5, 5},  {1.0, 0.5, 10},
                                   {1.5, 0.5, 10}, {2.0, 0.5, 15}, {2.5, 0.5, 15}};
  const auto rates = window_rates(pieces, 3, 1.0);
  ASSERT_EQ(rates.size(), 3U);
  EXPECT_DOUBLE_EQ(rates[0], 10);
  EXPECT_DOUBLE_EQ(rates[1], 20);
  EXPECT_DOUBLE_EQ(rates[2], 30);
  EXPECT_DOUBLE_EQ(median(rates), 20);
}

TEST(sweep_repeat_test, window_rates_late_pieces_count_in_the_last_window) {
  // A repetition that starts after the last window's end (the bench's window overran).
  const auto rates = window_rates({{0.2, 1, 10}, {1.2, 1, 20}, {2.1, 1, 40}}, 2, 1.0);
  ASSERT_EQ(rates.size(), 2U);
  EXPECT_DOUBLE_EQ(rates[0], 10);
  EXPECT_DOUBLE_EQ(rates[1], 30);  // (20 + 40) / 2 s
}

TEST(sweep_repeat_test, window_rates_leave_out_empty_windows) {
  // Long repetitions: nothing starts in the second window.
  const auto rates = window_rates({{0, 1.5, 15}, {1.5 + 0.6, 0.9, 9}}, 3, 1.0);
  ASSERT_EQ(rates.size(), 2U);
  EXPECT_DOUBLE_EQ(rates[0], 10);
  EXPECT_DOUBLE_EQ(rates[1], 10);
  EXPECT_TRUE(window_rates({}, 3, 1.0).empty());
  EXPECT_TRUE(window_rates({{0, 1, 1}}, 0, 1.0).empty());
}

}  // namespace
}  // namespace gpuclk::sweep
