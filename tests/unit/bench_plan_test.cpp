#include <gtest/gtest.h>

#include <cmath>

#include "bench/plan.h"

namespace gpuclk::bench {
namespace {

TEST(bench_plan_test, groups_short_launches_into_repetitions_of_the_target_length) {
  // 0.7 ms copies, 0.1 s repetitions, 3 s window.
  const MeasurementPlan plan = plan_measurement(0.0007, 3.0, 0.1, 5);
  EXPECT_EQ(plan.launches_per_repetition, 143);
  EXPECT_EQ(plan.repetitions, 30);
}

TEST(bench_plan_test, a_launch_longer_than_a_repetition_is_a_repetition_of_one) {
  const MeasurementPlan plan = plan_measurement(0.25, 3.0, 0.1, 5);
  EXPECT_EQ(plan.launches_per_repetition, 1);
  EXPECT_EQ(plan.repetitions, 12);
}

TEST(bench_plan_test, short_windows_still_get_the_minimum_repetitions) {
  const MeasurementPlan plan = plan_measurement(0.021, 0.05, 0.1, 5);
  EXPECT_EQ(plan.launches_per_repetition, 5);
  EXPECT_EQ(plan.repetitions, 5);
}

TEST(bench_plan_test, degenerate_inputs_give_a_bounded_plan) {
  const MeasurementPlan zero = plan_measurement(0.0, 1.0, 0.1, 0);
  EXPECT_GE(zero.launches_per_repetition, 1);
  EXPECT_LE(zero.launches_per_repetition, 1000000);
  EXPECT_GE(zero.repetitions, 1);
  const MeasurementPlan nan = plan_measurement(0.01, std::nan(""), std::nan(""), 3);
  EXPECT_EQ(nan.launches_per_repetition, 1);
  EXPECT_EQ(nan.repetitions, 3);
}

}  // namespace
}  // namespace gpuclk::bench
