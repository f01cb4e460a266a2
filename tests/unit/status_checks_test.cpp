#include <gtest/gtest.h>

#include "gpu/status.h"

namespace gpuclk::gpu {
namespace {

StatusSnapshot healthy(unsigned index) {
  StatusSnapshot s;
  s.index = index;
  s.name = "NVIDIA H100 80GB HBM3";
  s.sm_clock = Megahertz(1980);
  s.sm_max = Megahertz(1980);
  s.app_sm_clock = Megahertz(1980);
  s.app_memory_clock = Megahertz(2619);
  s.power_limit = Watts(700);
  s.persistence_mode = true;
  s.pcie_link = PcieLink{5, 16};
  s.pcie_max = PcieLink{5, 16};
  s.utilization = Utilization{Ratio(0.9), Ratio(0.3)};
  s.clock_reasons = ClockReasons(0);
  s.temperature = Celsius(60);
  s.slowdown_temperature = Celsius(89);
  return s;
}

bool mentions(const std::vector<Finding>& f, const std::string& text, unsigned gpu) {
  for (const auto& x : f) {
    if (x.message.find(text) != std::string::npos &&
        std::find(x.gpus.begin(), x.gpus.end(), gpu) != x.gpus.end())
      return true;
  }
  return false;
}

}  // namespace

TEST(status_checks_test, a_healthy_node_has_no_findings) {
  EXPECT_TRUE(check_status({healthy(0), healthy(1), healthy(2), healthy(3)}).empty());
}

TEST(status_checks_test, odd_application_clocks_and_power_limit_are_named) {
  auto gpus = std::vector{healthy(0), healthy(1), healthy(2), healthy(3)};
  gpus[2].app_sm_clock = Megahertz(1410);
  gpus[3].power_limit = Watts(500);
  auto f = check_status(gpus);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_TRUE(mentions(
      f, "application clocks (SM/memory) 1410/2619 MHz differ from the other GPUs' 1980/2619 MHz",
      2));
  EXPECT_TRUE(mentions(f, "power limits 500 W differ", 3));
}

TEST(status_checks_test, different_models_are_not_compared) {
  auto a100 = healthy(1);
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.app_sm_clock = Megahertz(1410);
  a100.power_limit = Watts(400);
  EXPECT_TRUE(check_status({healthy(0), a100}).empty());
}

TEST(status_checks_test, persistence_off_and_degraded_pcie_link) {
  auto gpus = std::vector{healthy(0), healthy(1)};
  gpus[0].persistence_mode = false;
  gpus[1].pcie_link = PcieLink{3, 8};
  auto f = check_status(gpus);
  EXPECT_TRUE(mentions(f, "persistence mode is off", 0));
  EXPECT_TRUE(mentions(f, "x8 of x16", 1));
  EXPECT_TRUE(mentions(f, "Gen3 of Gen5 while busy", 1));
}

TEST(status_checks_test, a_lower_link_generation_at_idle_is_power_saving_not_a_fault) {
  auto idle = healthy(0);
  idle.utilization = Utilization{Ratio(0), Ratio(0)};
  idle.pcie_link = PcieLink{1, 16};
  EXPECT_TRUE(check_status({idle}).empty());
}

TEST(status_checks_test, thermal_slowdown_and_power_cap) {
  auto hot = healthy(0);
  hot.clock_reasons = ClockReasons(ClockReasons::sw_thermal_slowdown);
  hot.temperature = Celsius(87);
  auto capped = healthy(1);
  capped.clock_reasons = ClockReasons(ClockReasons::sw_power_cap);
  capped.sm_clock = Megahertz(1410);
  auto f = check_status({hot, capped});
  EXPECT_TRUE(mentions(f, "thermal slowdown active", 0));
  EXPECT_TRUE(mentions(f, "within 5 C of its slowdown temperature", 0));
  EXPECT_TRUE(mentions(f, "holds the SM clock at 1410 of 1980 MHz", 1));
}

}  // namespace gpuclk::gpu
