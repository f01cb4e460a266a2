// The fleet's rules over hand-made snapshots: each problem found once, on the right node and GPU,
// and a healthy fleet finds nothing above info.
#include "fleet/fleet_rules.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace gpuclk::fleet {
namespace {

// `nodes` nodes of 8 busy H100s each, all alike and healthy.
Snapshot healthy(int nodes) {
  Snapshot s;
  s.range_s = 600;
  for (int n = 0; n < nodes; ++n) {
    const auto instance = "node" + std::to_string(n) + ":9400";
    s.nodes.push_back({instance, 1.0, true, 1.0e6, 8});
    for (unsigned i = 0; i < 8; ++i) {
      GpuState g;
      g.instance = instance;
      g.index = i;
      g.model = "NVIDIA H100 80GB HBM3";
      g.sm_clock_mhz = g.sm_clock_median_mhz = 1700 + 10.0 * i;
      g.power_limit_w = 700;
      g.app_sm_clock_mhz = 1980;
      g.app_memory_clock_mhz = 2619;
      g.persistence_mode = true;
      g.sm_clock_lock = "unlocked";
      g.utilization = g.utilization_avg = 1.0;
      g.memory_used_bytes = 40e9;
      g.reason_fraction = {{"sw_power_cap", 0.2}, {"gpu_idle", 0.0}};
      s.gpus.push_back(g);
    }
  }
  return s;
}

std::vector<FleetFinding> above_info(const std::vector<FleetFinding>& all) {
  std::vector<FleetFinding> out;
  for (const auto& f : all)
    if (f.finding.severity > rules::Severity::info) out.push_back(f);
  return out;
}

TEST(FleetRules, HealthyFleetHasNoFindings) {
  const auto findings = evaluate(healthy(4));
  EXPECT_TRUE(findings.empty()) << findings.front().finding.summary;
  EXPECT_EQ(exit_code(findings), 0);
}

TEST(FleetRules, OddNodeSettingNamesNodeAndMajority) {
  auto s = healthy(4);
  for (auto& g : s.gpus)
    if (g.instance == "node2:9400") g.app_sm_clock_mhz = 1410, g.sm_clock_median_mhz = 1410;
  const auto f = above_info(evaluate(s));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.rule, "settings_differ");
  EXPECT_EQ(f[0].instance, "node2:9400");
  EXPECT_EQ(f[0].finding.gpus.size(), 8u);
  EXPECT_NE(f[0].finding.summary.find("1410/2619 MHz"), std::string::npos);
  EXPECT_NE(f[0].finding.summary.find("fleet's 1980/2619 MHz"), std::string::npos);
  EXPECT_NE(f[0].finding.fix.find("gpuclk set --app-clocks 2619,1980"), std::string::npos);
}

TEST(FleetRules, PowerLimitAndPersistenceDiffer) {
  auto s = healthy(3);
  s.gpus[9].power_limit_w = 500;        // node1 GPU 1
  s.gpus[20].persistence_mode = false;  // node2 GPU 4
  const auto f = above_info(evaluate(s));
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].instance, "node1:9400");
  EXPECT_EQ(f[0].finding.gpus, std::vector<unsigned>{1});
  EXPECT_NE(f[0].finding.fix.find("--power-limit 700"), std::string::npos);
  EXPECT_EQ(f[1].instance, "node2:9400");
  EXPECT_NE(f[1].finding.fix.find("--persistence on"), std::string::npos);
}

TEST(FleetRules, ThermalThrottleIsAWarningPowerCapANote) {
  auto s = healthy(2);
  s.gpus[3].reason_fraction["sw_thermal_slowdown"] = 0.9;
  s.gpus[3].sm_clock_median_mhz = 1200;  // explained by the heat: not also a straggler
  for (auto& g : s.gpus)
    if (g.instance == "node1:9400") g.reason_fraction["sw_power_cap"] = 0.95;
  const auto all = evaluate(s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].finding.rule, "throttled");
  EXPECT_EQ(all[0].finding.severity, rules::Severity::warning);
  EXPECT_EQ(all[0].instance, "node0:9400");
  EXPECT_EQ(all[0].finding.gpus, std::vector<unsigned>{3});
  EXPECT_EQ(all[1].finding.severity, rules::Severity::info);
  EXPECT_EQ(all[1].finding.gpus.size(), 8u);
  EXPECT_EQ(exit_code(all), rules::kExitWarning);
}

TEST(FleetRules, StragglerWithoutOtherExplanation) {
  auto s = healthy(2);
  s.gpus[13].sm_clock_median_mhz = 1100;
  const auto f = above_info(evaluate(s));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.rule, "straggler");
  EXPECT_EQ(f[0].instance, "node1:9400");
  EXPECT_EQ(f[0].finding.gpus, std::vector<unsigned>{5});
}

TEST(FleetRules, LostGpuNodeDownIdleAndNodeFindings) {
  auto s = healthy(3);
  s.gpus[2].lost = true;
  s.nodes[1].up = 0;
  s.nodes.push_back({"gone:9400", std::nullopt, true, std::nullopt, 0});
  s.gpus[17].utilization_avg = 0.0;  // node2 GPU 1: holds 40 GB, runs nothing
  s.node_findings = {{"node0:9400", "gpu_lost", rules::Severity::critical, {2}},
                     {"node2:9400", "pcie_link_degraded", rules::Severity::warning, {6}}};
  const auto f = evaluate(s);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].finding.rule, "gpu_lost");  // the node's own gpu_lost is the same: said once
  EXPECT_EQ(f[0].instance, "node0:9400");
  EXPECT_EQ(f[1].finding.rule, "node_not_scraped");
  EXPECT_EQ(f[1].instance, "gone:9400");
  EXPECT_EQ(f[2].finding.rule, "node_not_scraped");
  EXPECT_EQ(f[2].instance, "node1:9400");
  EXPECT_EQ(f[3].finding.rule, "idle_allocated");
  EXPECT_EQ(f[4].finding.rule, "pcie_link_degraded");
  EXPECT_EQ(f[4].finding.gpus, std::vector<unsigned>{6});
  EXPECT_EQ(exit_code(f), rules::kExitCritical);
}

TEST(FleetSelector, CheckedAndMerged) {
  EXPECT_EQ(check_selector(" {job=\"gpuclk\"} "), "{job=\"gpuclk\"}");
  EXPECT_EQ(check_selector(""), "");
  EXPECT_THROW(check_selector("job=\"gpuclk\""), Error);
  EXPECT_THROW(check_selector("{job=\"a\"} or up"), Error);
  EXPECT_THROW(check_selector("{job=\"a}"), Error);
  EXPECT_EQ(series_matching("gpuclk_gpu_.*", "{job=\"g\"}"),
            "{__name__=~\"gpuclk_gpu_.*\",job=\"g\"}");
  EXPECT_EQ(series_matching("x", ""), "{__name__=~\"x\"}");
  EXPECT_THROW(Prometheus("localhost:9090", std::chrono::seconds(1)), Error);
  EXPECT_THROW(Prometheus("http://", std::chrono::seconds(1)), Error);
}

}  // namespace
}  // namespace gpuclk::fleet
