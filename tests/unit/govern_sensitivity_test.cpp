#include <gtest/gtest.h>

#include <cmath>

#include "govern/sensitivity.h"

namespace gpuclk::govern {
namespace {

TEST(govern_sensitivity_test, prior_predicts_before_any_pair) {
  ClockSensitivity s(1.0);
  // time ∝ 1/f: 1980 / 1800 - 1 = 10 %.
  EXPECT_NEAR(s.slowdown(Megahertz(1800), Megahertz(1980)), 0.1, 1e-9);
  EXPECT_EQ(s.slowdown(Megahertz(1980), Megahertz(1980)), 0);
}

TEST(govern_sensitivity_test, a_pair_in_one_run_teaches_the_band_between) {
  ClockSensitivity s(0.3);
  s.observe(1, Megahertz(1980), 1.0);
  s.observe(1, Megahertz(1980), 1.0);
  s.observe(1, Megahertz(1830), 0.9885);  // elasticity ln(0.9885)/ln(1830/1980) = 0.147
  EXPECT_EQ(s.pairs(), 1u);
  EXPECT_NEAR(s.elasticity_at(Megahertz(1900)), 0.147, 0.002);
  EXPECT_NEAR(s.slowdown(Megahertz(1830), Megahertz(1980)), 1 / 0.9885 - 1, 0.001);
  // Below everything learned the prior (0.3) still holds: knees steepen downwards.
  EXPECT_NEAR(s.elasticity_at(Megahertz(1200)), 0.3, 1e-9);
  EXPECT_EQ(s.lowest_observed(), Megahertz(1830));
}

TEST(govern_sensitivity_test, observations_of_different_runs_never_pair) {
  ClockSensitivity s(0.3);
  s.observe(1, Megahertz(1980), 1.0);
  s.observe(2, Megahertz(1500), 0.2);  // another phase: its throughput says nothing about the clock
  EXPECT_EQ(s.pairs(), 0u);
  EXPECT_NEAR(s.elasticity_at(Megahertz(1700)), 0.3, 1e-9);
}

TEST(govern_sensitivity_test, implausible_elasticity_is_ignored) {
  ClockSensitivity s(0.3);
  s.observe(1, Megahertz(1980), 1.0);
  s.observe(1, Megahertz(1830), 0.3);  // -70 % for -8 % of clock: not the clock's doing
  EXPECT_EQ(s.pairs(), 0u);
}

}  // namespace
}  // namespace gpuclk::govern
