// The H100 model against docs/calibration.md ("The figures that matter"): every row of the
// table in docs/simulator.md within its tolerance. The test prints the table it checked.
#include <gtest/gtest.h>

#include <iostream>

#include "calibration.h"
#include "physics.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

TEST(sim_calibration_test, h100_reproduces_the_calibration_table) {
  const Scenario scenario = testing::load("h100-calibration");
  const std::vector<CalibrationRow> rows = h100_calibration_table(scenario);
  std::cout << format_calibration_table(rows);
  ASSERT_EQ(rows.size(), 19u);
  for (const CalibrationRow& row : rows) {
    EXPECT_TRUE(row.ok()) << row.workload << " " << row.quantity << ": measured " << row.measured
                          << ", simulated " << row.simulated << ", tolerance " << row.tolerance;
  }
}

TEST(sim_calibration_test, gemm_phases_last_about_twenty_seconds_at_calibrated_clocks) {
  const auto phases = measure_phases(testing::load("h100-calibration"), 0, 140);
  int gemms = 0;
  for (const PhaseMeasurement& m : phases) {
    if (m.name.rfind("gemm_", 0) == 0 || m.name == "copy_1GiB") {
      ++gemms;
      EXPECT_NEAR(m.duration_s, 20, 1) << m.name;
    }
  }
  EXPECT_EQ(gemms, 4);
}

TEST(sim_calibration_test, gpm_metrics_follow_the_measured_ones) {
  // gpm.json: BF16 GEMM SM util 96 %, tensor 93 %, DRAM 24 %, occupancy 14 %; copy DRAM 90 %.
  const GpuSpec& spec = *testing::h100();
  const PhaseRates gemm =
      phase_rates(spec, testing::compute(DataType::bf16, 1, 850), 1410, 2619, 50e9);
  EXPECT_NEAR(gemm.activity.activity[static_cast<int>(Activity::sm_active)], 0.96, 0.01);
  EXPECT_NEAR(gemm.activity.activity[static_cast<int>(Activity::tensor)], 0.93, 0.05);
  EXPECT_NEAR(gemm.activity.activity[static_cast<int>(Activity::dram)], 0.24, 0.02);
  EXPECT_NEAR(gemm.activity.activity[static_cast<int>(Activity::sm_occupancy)], 0.14, 0.01);
  const PhaseRates copy = phase_rates(spec, testing::memory(1), 1980, 2619, 50e9);
  EXPECT_NEAR(copy.activity.activity[static_cast<int>(Activity::dram)], 0.90, 0.01);
  EXPECT_NEAR(copy.activity.activity[static_cast<int>(Activity::sm_occupancy)], 0.80, 0.01);
  EXPECT_EQ(copy.activity.activity[static_cast<int>(Activity::tensor)], 0);
}

}  // namespace
}  // namespace gpuclk::sim
