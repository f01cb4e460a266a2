#include <gtest/gtest.h>

#include <limits>

#include "govern/classifier.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

TEST(govern_classifier_test, copy_kernel_is_memory_bound) {
  EXPECT_EQ(classify(memory_bound(1980)), PhaseClass::memory_bound);
}

TEST(govern_classifier_test, gemm_below_the_power_limit_is_compute_bound) {
  EXPECT_EQ(classify(compute_bound(1980)), PhaseClass::compute_bound);
  // FP32 SGEMM: no tensor activity, the FP32 pipe is the busiest unit.
  auto sgemm = busy(1980, 0.96, 0, 0.1);
  sgemm.fp32_active = Ratio(0.78);
  EXPECT_EQ(classify(sgemm), PhaseClass::compute_bound);
}

TEST(govern_classifier_test, power_cap_reason_wins_over_activity) {
  EXPECT_EQ(classify(power_capped(1410)), PhaseClass::power_capped);
  auto brake = memory_bound(1980);
  brake.reasons = gpu::ClockReasons(gpu::ClockReasons::hw_power_brake_slowdown);
  EXPECT_EQ(classify(brake), PhaseClass::power_capped);
}

TEST(govern_classifier_test, nothing_running_is_idle_even_with_context_clocks_up) {
  EXPECT_EQ(classify(idle(1980)), PhaseClass::idle);
  // A GPU with no process at all reports gpu_idle; also idle.
  auto off = idle(345);
  off.reasons = gpu::ClockReasons(gpu::ClockReasons::gpu_idle);
  EXPECT_EQ(classify(off), PhaseClass::idle);
}

TEST(govern_classifier_test, missing_key_reading_is_unknown) {
  auto s = memory_bound(1980);
  s.dram_active.reset();
  EXPECT_EQ(classify(s), PhaseClass::unknown);
  s = memory_bound(1980);
  s.reasons.reset();
  EXPECT_EQ(classify(s), PhaseClass::unknown);
  s = memory_bound(1980);
  s.sm_clock.reset();
  EXPECT_EQ(classify(s), PhaseClass::unknown);
}

TEST(govern_classifier_test, nan_activity_is_unknown_not_compute_bound) {
  // What the H100's driver returned for a 20 ms GPM window its counters had not advanced in:
  // SM activity 0, DRAM bandwidth NaN. Every comparison with NaN is false, so it used to fall
  // through to compute_bound, idle GPU or not.
  auto s = idle(1980);
  s.sm_active = Ratio(0.0);
  s.dram_active = Ratio(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(classify(s), PhaseClass::unknown);
  s = memory_bound(1980);
  s.sm_active = Ratio(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(classify(s), PhaseClass::unknown);
}

TEST(govern_classifier_test, names_round_trip) {
  for (int i = 0; i < kPhaseClassCount; ++i) {
    const auto c = static_cast<PhaseClass>(i);
    EXPECT_EQ(phase_class_by_name(to_string(c)), c);
  }
  EXPECT_FALSE(phase_class_by_name("busy"));
}

}  // namespace
}  // namespace gpuclk::govern
