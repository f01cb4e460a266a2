#include <gtest/gtest.h>

#include "physics.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

using testing::h100;

TEST(sim_physics_test, dynamic_scale_is_one_at_max_and_rises_with_clock) {
  const GpuSpec& spec = *h100();
  EXPECT_DOUBLE_EQ(dynamic_scale(spec, spec.sm_max_mhz), 1.0);
  double previous = 0;
  for (std::uint32_t f = spec.sm_min_mhz; f <= spec.sm_max_mhz; f += spec.sm_step_mhz) {
    const double d = dynamic_scale(spec, f);
    EXPECT_GT(d, previous) << f;
    previous = d;
  }
  // Below the voltage knee only f changes: scale ∝ f.
  EXPECT_NEAR(dynamic_scale(spec, 690) / dynamic_scale(spec, 345), 2.0, 1e-9);
}

TEST(sim_physics_test, compute_phase_rate_is_proportional_to_clock) {
  const GpuSpec& spec = *h100();
  const Phase gemm = testing::compute(DataType::bf16, 1);
  const double at_max = phase_rates(spec, gemm, 1980, 2619, 50e9).work_per_s;
  const double at_half = phase_rates(spec, gemm, 990, 2619, 50e9).work_per_s;
  EXPECT_NEAR(at_max / at_half, 2.0, 1e-9);
  // 132 SMs × 4096 FLOP/clk × 1.98 GHz × efficiency 0.894.
  EXPECT_NEAR(at_max / 1e12, 1070.5 * 0.894, 1.0);
}

TEST(sim_physics_test, memory_phase_rate_saturates_above_the_knee) {
  const GpuSpec& spec = *h100();
  const Phase copy = testing::memory(1);
  const double at_max = phase_rates(spec, copy, 1980, 2619, 50e9).work_per_s;
  EXPECT_NEAR(at_max / 1e12, 3.0, 0.01);  // the 1 GiB copy of bench_power.json
  // Half the SM clock keeps 84 % of the bandwidth (bandwidth_vs_sms.csv at 66 SMs).
  const double at_half = phase_rates(spec, copy, 990, 2619, 50e9).work_per_s;
  EXPECT_NEAR(at_half / at_max, 0.85, 0.02);
  // The lower memory clock scales bandwidth with it.
  const double low_memory = phase_rates(spec, copy, 1980, 1593, 50e9).work_per_s;
  EXPECT_NEAR(low_memory / at_max, 1593.0 / 2619.0, 1e-9);
}

TEST(sim_physics_test, roofline_limits_low_intensity_compute_by_bandwidth) {
  const GpuSpec& spec = *h100();
  const Phase skinny = testing::compute(DataType::bf16, 1, 10);  // 10 FLOP per byte
  const PhaseRates r = phase_rates(spec, skinny, 1980, 2619, 50e9);
  EXPECT_NEAR(r.work_per_s, 10 * 3.0e12, 0.05e12);
  EXPECT_NEAR(r.activity.dram, 0.895, 0.01);
  EXPECT_LT(r.activity.pipe[static_cast<int>(DataType::bf16)], 0.05);
}

TEST(sim_physics_test, board_power_components_at_idle_and_under_load) {
  const GpuSpec& spec = *h100();
  TickActivity idle;
  EXPECT_NEAR(board_power(spec, 345, 2619, 34, idle), 75.4, 0.5);
  // Context held, nothing running: 132-138 W at 40-45 °C (bench_power.json's gaps), 133 W at
  // 48 °C and 143 W at 57 °C (power_by_data_h100.json).
  EXPECT_NEAR(board_power(spec, 1980, 2619, 40, idle), 125, 2);
  EXPECT_NEAR(board_power(spec, 1980, 2619, 48, idle), 133, 2);
  EXPECT_NEAR(board_power(spec, 1980, 2619, 57, idle), 143, 2);
  // Hotter die, more leakage.
  EXPECT_GT(board_power(spec, 345, 2619, 80, idle), board_power(spec, 345, 2619, 34, idle) + 15);
}

TEST(sim_physics_test, gemm_pipe_power_is_a_busy_part_plus_a_part_following_the_rate) {
  // A GEMM at 70 % of peak draws more than 70 % of the full pipe's power: the busy part
  // (pipe_busy_w) runs whatever rate the shape reaches (docs/simulator.md, GEMM power by type).
  const GpuSpec& spec = *h100();
  const int bf16 = static_cast<int>(DataType::bf16);
  ASSERT_GT(spec.pipe_busy_w[bf16], 0);
  ASSERT_LT(spec.pipe_busy_w[bf16], spec.pipe_full_w[bf16]);
  const double scale = dynamic_scale(spec, 1455);
  auto pipe_watts = [&](double utilization) {
    TickActivity none;
    TickActivity gemm;
    gemm.kernel[bf16] = 1;
    gemm.pipe[bf16] = utilization;
    return board_power(spec, 1455, 2619, 65, gemm) - board_power(spec, 1455, 2619, 65, none);
  };
  EXPECT_NEAR(pipe_watts(1), scale * spec.pipe_full_w[bf16], 1e-6);
  EXPECT_NEAR(pipe_watts(0), scale * spec.pipe_busy_w[bf16], 1e-6);
  EXPECT_GT(pipe_watts(0.7), 0.7 * pipe_watts(1));
  // The phase sets both: a compute phase is one kernel of its type at its efficiency.
  Phase skinny = testing::compute(DataType::bf16, 1, 455);
  skinny.efficiency = 0.692;
  const PhaseRates r = phase_rates(spec, skinny, 1455, 2619, 50e9);
  EXPECT_EQ(r.activity.kernel[bf16], 1);
  EXPECT_NEAR(r.activity.pipe[bf16], 0.692, 1e-9);
  // A memory phase is no GEMM: its FLOPs cost only their share of the pipe.
  EXPECT_EQ(phase_rates(spec, testing::memory(1), 1980, 2619, 50e9).activity.kernel[bf16], 0);
}

TEST(sim_physics_test, pcie_bandwidth_follows_generation_and_width) {
  EXPECT_NEAR(pcie_bandwidth(5, 16) / 1e9, 53.6, 0.1);
  EXPECT_NEAR(pcie_bandwidth(3, 8) / pcie_bandwidth(5, 16), 1.0 / 8.0, 1e-9);
  EXPECT_NEAR(pcie_bandwidth(1, 16) / 1e9, 3.4, 0.01);  // 8b/10b encoding
  EXPECT_EQ(pcie_bandwidth(0, 16), 0);
}

}  // namespace
}  // namespace gpuclk::sim
