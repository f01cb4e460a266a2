// The H100 model against docs/calibration.md ("The figures that matter") and against the GEMMs
// per data type and shape of docs/results/raw/gemm_power_by_dtype_h100.json: every row of the
// tables in docs/simulator.md within its tolerance. The tests print the tables they checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "calibration.h"
#include "gpu_model.h"
#include "node_model.h"
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

std::vector<GemmMeasurement> gemm_measurements() {
  return load_gemm_measurements(std::filesystem::path(GPUCLK_SOURCE_DIR) / "docs" / "results" /
                                "raw" / "gemm_power_by_dtype_h100.json");
}

TEST(sim_calibration_test, h100_reproduces_the_gemm_power_by_dtype_table) {
  const std::vector<GemmMeasurement> measured = gemm_measurements();
  ASSERT_EQ(measured.size(), 15u);  // FP16, BF16, TF32, FP32, FP8 × three shapes
  const std::vector<CalibrationRow> rows =
      gemm_dtype_table(testing::load("h100-gemm-dtypes"), measured);
  std::cout << format_calibration_table(rows);
  ASSERT_EQ(rows.size(), 45u);  // rate, median SM clock and power of each
  for (const CalibrationRow& row : rows) {
    EXPECT_TRUE(row.ok()) << row.workload << " " << row.quantity << ": measured " << row.measured
                          << ", simulated " << row.simulated << ", tolerance " << row.tolerance;
  }
}

TEST(sim_calibration_test, gemm_clock_under_the_cap_depends_on_data_type_and_shape) {
  // What one tensor power curve could not do: at 8192³ the card runs FP8 < FP16 < BF16 < TF32
  // under 700 W, and the skinny K = 512 GEMM of each 16-bit and 8-bit type runs higher than its
  // square 8192³ one (by 90-240 MHz; the model by at least three 15 MHz steps). The model's
  // clocks keep both orders.
  const std::vector<GemmMeasurement> measured = gemm_measurements();
  const std::vector<CalibrationRow> rows =
      gemm_dtype_table(testing::load("h100-gemm-dtypes"), measured);
  std::map<std::string, double> model_mhz;
  std::map<std::string, double> card_mhz;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const std::string key = measured[i].dtype + "_" + measured[i].shape;
    const CalibrationRow& clock = rows.at(3 * i + 1);
    ASSERT_EQ(clock.quantity, "SM clock MHz");
    model_mhz[key] = clock.simulated;
    card_mhz[key] = clock.measured;
  }
  const char* order[] = {"fp8", "fp16", "bf16", "tf32"};
  for (int i = 0; i + 1 < 4; ++i) {
    const std::string lo = std::string(order[i]) + "_square-8192";
    const std::string hi = std::string(order[i + 1]) + "_square-8192";
    ASSERT_LT(card_mhz.at(lo), card_mhz.at(hi)) << lo << " " << hi;
    EXPECT_LT(model_mhz.at(lo), model_mhz.at(hi)) << lo << " " << hi;
  }
  for (const char* type : {"fp8", "fp16", "bf16"}) {
    const std::string square = std::string(type) + "_square-8192";
    const std::string skinny = std::string(type) + "_skinny-k512";
    ASSERT_GT(card_mhz.at(skinny), card_mhz.at(square) + 45) << type;
    EXPECT_GE(model_mhz.at(skinny), model_mhz.at(square) + 45) << type;
  }
}

std::vector<PowerByDataCase> power_by_data_cases() {
  return load_power_by_data(std::filesystem::path(GPUCLK_SOURCE_DIR) / "docs" / "results" / "raw" /
                            "power_by_data_h100.json");
}

// Issue 27's measurements: every case the fit left out within 5 % in rate, clock and power, and
// each fitted case within 5 % too, except the rates at the ends of the shape model (BF16 1024³
// +6 %, 2048³ −13 %: one-wave GEMMs; 16384³ +5.1 %; docs/simulator.md, "Power by the data").
TEST(sim_calibration_test, h100_reproduces_the_power_by_data_table) {
  const std::vector<PowerByDataCase> cases = power_by_data_cases();
  ASSERT_EQ(cases.size(), 30u);
  const auto held = std::count_if(cases.begin(), cases.end(),
                                  [](const PowerByDataCase& c) { return c.held_out; });
  ASSERT_EQ(held, 8);
  const std::vector<CalibrationRow> rows =
      power_by_data_table(testing::load("h100-power-by-data"), cases);
  std::cout << format_calibration_table(rows);
  int checked = 0;
  for (const CalibrationRow& row : rows) {
    if (row.quantity == "memory-scope power W") continue;  // listed, not fitted
    const bool shape_end = row.workload.rfind("gemm bf16 1024x1024x1024", 0) == 0 ||
                           row.workload.rfind("gemm bf16 2048x2048x2048", 0) == 0 ||
                           row.workload.rfind("gemm bf16 16384x16384x16384", 0) == 0;
    if (shape_end && row.quantity == "rate TFLOP/s") {
      EXPECT_FALSE(row.workload.find("(held out)") != std::string::npos) << row.workload;
      EXPECT_NEAR(row.simulated, row.measured, 0.15 * row.measured) << row.workload;
      continue;
    }
    ++checked;
    EXPECT_TRUE(row.ok()) << row.workload << " " << row.quantity << ": measured " << row.measured
                          << ", simulated " << row.simulated << ", tolerance " << row.tolerance;
  }
  EXPECT_GT(checked, 70);
}

// The H200 model against the same run on an H200 (power_by_data_h200.json): every row within 5 %
// but the one-wave BF16 2048³ GEMM's rate (−9 %) and idle after the work (+6 %: the card's heat
// sink cooled faster than the model's).
TEST(sim_calibration_test, h200_reproduces_its_power_by_data_table) {
  const std::vector<PowerByDataCase> cases =
      load_power_by_data(std::filesystem::path(GPUCLK_SOURCE_DIR) / "docs" / "results" / "raw" /
                         "power_by_data_h200.json");
  ASSERT_EQ(cases.size(), 30u);
  const std::vector<CalibrationRow> rows =
      power_by_data_table(testing::load("h200-power-by-data"), cases);
  std::cout << format_calibration_table(rows);
  for (const CalibrationRow& row : rows) {
    if (row.quantity == "memory-scope power W") continue;
    const bool known = (row.workload.rfind("gemm bf16 2048x2048x2048", 0) == 0 &&
                        row.quantity == "rate TFLOP/s") ||
                       (row.workload.rfind("idle, context held, after the work", 0) == 0 &&
                        row.quantity == "power W");
    const double tolerance = known ? 0.10 * row.measured : row.tolerance;
    EXPECT_NEAR(row.simulated, row.measured, tolerance) << row.workload << " " << row.quantity;
  }
}

// Held-out mixed phases on an H200 (power_mixed_h200.json): BF16 GEMMs with idle gaps at
// 0.3/0.6/0.9 s of each second and GEMMs alternating with copies. The power controller's lag
// (h200-sxm-141gb.toml, controller_time_constant_s) is fitted on the 0.3 and 0.9 s cases; the 0.6 s
// case and the GEMM/copy one are held out. Every rate, mean SM clock and mean power within 5 %;
// the GEMM/copy case replays the GEMMs' measured 51.4 % of its window (power_mixed_h200.md, "A
// second run"). The memory scope is listed: this card read 44.6 W idle, the fitted one 32 W.
TEST(sim_calibration_test, h200_mixed_phases_match_the_held_out_cases) {
  const std::vector<MixedCase> cases =
      load_power_mixed(std::filesystem::path(GPUCLK_SOURCE_DIR) / "docs" / "results" / "raw" /
                       "power_mixed_h200.json");
  ASSERT_EQ(cases.size(), 6u);
  const std::vector<CalibrationRow> rows =
      mixed_phase_table(testing::load("h200-power-mixed"), cases);
  std::cout << format_calibration_table(rows);
  int checked = 0;
  for (const CalibrationRow& row : rows) {
    if (row.quantity == "memory-scope power W") continue;
    if (row.workload.rfind("idle, context held, after", 0) == 0 && row.quantity == "power W")
      continue;  // h200_reproduces_its_power_by_data_table's known +6 %: the card's sink cooled
                 // faster
    ++checked;   // the GEMM/copy case replays the GEMMs' measured share (51.4 %), not 50 %
    EXPECT_NEAR(row.simulated, row.measured, 0.05 * row.measured)
        << row.workload << " " << row.quantity;
  }
  EXPECT_EQ(checked, 15);
}

// The controller's lag, where the mixed phases show it: a 0.3 s burst after 0.7 s idle runs
// faster per second of GEMM than the steady GEMM (the card: 700 against 677 TFLOP/s) and draws
// more than the limit while the clock is pulled down; without the lag every tick holds 700 W.
TEST(sim_calibration_test, h200_bursts_start_at_the_idle_clock_and_overshoot_the_limit) {
  const Scenario scenario = testing::load("h200-power-mixed");
  NodeModel model(std::make_shared<const Scenario>(scenario));
  double peak_w = 0;
  std::uint32_t first_burst_mhz = 0;
  bool in_burst = false;
  for (int k = 0; k < 100 * 10; ++k) {  // idle 5 s, then the 0.3 s bursts
    const Phase* p = current_phase(model.config(0), model.gpu(0));
    model.step(kTickSeconds);
    const bool burst = p && p->kind == PhaseKind::compute && p->name == "case01";
    if (burst && !in_burst && model.now_s() > 7) first_burst_mhz = model.gpu(0).dynamics.sm_mhz;
    if (burst && model.now_s() > 7) peak_w = std::max(peak_w, model.gpu(0).dynamics.power_w);
    in_burst = burst;
  }
  EXPECT_GT(first_burst_mhz, 1800u);  // the idle clock (1980), pulled down within the tick
  EXPECT_GT(peak_w, 800.0);
  EXPECT_LT(peak_w, 1300.0);  // P(1980) of the BF16 GEMM at the cool die
}

// The same GEMM or copy on zeros and on random data: the card's power, clock and rate for both.
TEST(sim_calibration_test, zeros_and_random_data_draw_what_the_card_drew) {
  const std::vector<PowerByDataCase> cases = power_by_data_cases();
  const std::vector<CalibrationRow> rows =
      power_by_data_table(testing::load("h100-power-by-data"), cases);
  auto find = [&](const std::string& workload, const std::string& quantity) {
    for (const CalibrationRow& r : rows) {
      if (r.workload.rfind(workload, 0) == 0 && r.quantity == quantity) return r;
    }
    ADD_FAILURE() << "no row " << workload << " " << quantity;
    return CalibrationRow{};
  };
  for (const char* input : {"zeros", "normal"}) {
    const std::string gemm = std::string("gemm bf16 8192^3, ") + input;
    const std::string copy = std::string("copy 1 GiB (dst.copy_(src)), ") + input;
    for (const auto& [workload, quantity] :
         {std::pair{gemm, "power W"}, std::pair{gemm, "SM clock MHz"},
          std::pair{gemm, "rate TFLOP/s"}, std::pair{copy, "power W"}}) {
      const CalibrationRow r = find(workload, quantity);
      EXPECT_TRUE(r.ok()) << workload << " " << quantity << ": measured " << r.measured
                          << ", simulated " << r.simulated;
    }
  }
  // The gap itself: zeros draw a third less in the copy; the GEMM on zeros runs ~290 MHz higher.
  EXPECT_LT(find("copy 1 GiB (dst.copy_(src)), zeros", "power W").simulated,
            0.8 * find("copy 1 GiB (dst.copy_(src)), normal", "power W").simulated);
  EXPECT_GT(find("gemm bf16 8192^3, zeros", "SM clock MHz").simulated,
            find("gemm bf16 8192^3, normal", "SM clock MHz").simulated + 200);
}

}  // namespace
}  // namespace gpuclk::sim
