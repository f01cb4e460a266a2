#include "gpu/arch.h"

#include <gtest/gtest.h>

namespace gpuclk::gpu {

TEST(arch_test, h100_bf16_peak_matches_calibration) {
  // docs/calibration.md: 132 SMs x 4096 dense BF16 FLOP/clk/SM -> 1070 TFLOP/s at 1980 MHz,
  // 762 TFLOP/s at 1410 MHz.
  const ArchSpec* h100 = find_arch({9, 0});
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->family, "Hopper");
  EXPECT_NEAR(peak_flops(*h100, DataType::bf16, 132, units::Megahertz(1980)).value() / 1e12, 1070.5,
              0.5);
  EXPECT_NEAR(peak_flops(*h100, DataType::bf16, 132, units::Megahertz(1410)).value() / 1e12, 762.3,
              0.5);
  EXPECT_NEAR(peak_flops(*h100, DataType::fp32, 132, units::Megahertz(1980)).value() / 1e12, 66.9,
              0.1);
}

TEST(arch_test, a100_peaks_match_datasheet) {
  const ArchSpec* a100 = find_arch({8, 0});
  ASSERT_NE(a100, nullptr);
  // 108 SMs at 1410 MHz: 312 TF BF16, 156 TF TF32, 19.5 TF FP32 (datasheet, dense).
  EXPECT_NEAR(peak_flops(*a100, DataType::bf16, 108, units::Megahertz(1410)).value() / 1e12, 312,
              1);
  EXPECT_NEAR(peak_flops(*a100, DataType::tf32, 108, units::Megahertz(1410)).value() / 1e12, 156,
              1);
  EXPECT_NEAR(peak_flops(*a100, DataType::fp32, 108, units::Megahertz(1410)).value() / 1e12, 19.5,
              0.1);
  EXPECT_EQ(a100->flop_per_clock(DataType::fp8), 0);  // no FP8 before Ada/Hopper
}

TEST(arch_test, l4_fp8_peak_matches_datasheet) {
  const ArchSpec* l4 = find_arch({8, 9});
  ASSERT_NE(l4, nullptr);
  EXPECT_NEAR(peak_flops(*l4, DataType::fp8, 58, units::Megahertz(2040)).value() / 1e12, 242, 1);
}

TEST(arch_test, unknown_minor_falls_back_to_the_major_row) {
  const ArchSpec* a = find_arch({8, 7});  // Orin: same per-SM rates as GA10x
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->cc.minor, 6);
  EXPECT_EQ(find_arch({6, 0}), nullptr);  // Pascal is not covered
}

TEST(arch_test, every_row_covers_volta_to_blackwell) {
  for (ComputeCapability cc :
       {ComputeCapability{7, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}}) {
    const ArchSpec* a = find_arch(cc);
    ASSERT_NE(a, nullptr) << cc.major << "." << cc.minor;
    EXPECT_GT(a->flop_per_clock(DataType::fp32), 0);
    EXPECT_GT(a->flop_per_clock(DataType::fp16), a->flop_per_clock(DataType::fp32));
  }
}

TEST(arch_test, memory_bandwidth_from_clock_and_bus_width) {
  EXPECT_NEAR(peak_memory_bandwidth(units::Megahertz(2619), 5120).value() / 1e12, 3.35, 0.01);
  EXPECT_NEAR(peak_memory_bandwidth(units::Megahertz(6251), 192).value() / 1e9, 300, 1);
}

TEST(arch_test, data_type_names_round_trip) {
  for (auto t : kAllDataTypes) EXPECT_EQ(parse_data_type(to_string(t)), t);
  EXPECT_FALSE(parse_data_type("int4").has_value());
}

}  // namespace gpuclk::gpu
