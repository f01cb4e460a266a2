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
      g.utilization_avg = 1.0;
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

// `s` with its nodes running Slurm jobs of `per_job` nodes each (nodes 0-1 job 100, 2-3 job
// 101, ...), every GPU of a node in its node's job, busy `busy` of the time.
Snapshot with_jobs(Snapshot s, int per_job, double busy = 0.95) {
  for (const auto& g : s.gpus) {
    const int node = std::stoi(g.instance.substr(4));
    JobUse u;
    u.instance = g.instance;
    u.index = g.index;
    u.job = "slurm:" + std::to_string(100 + node / per_job);
    u.name = "Slurm job " + std::to_string(100 + node / per_job);
    u.context_s = 3600;
    u.busy_s = busy * 3600;
    u.energy_j = 2.0e6;
    s.jobs.push_back(u);
  }
  return s;
}

std::vector<FleetFinding> of_rule(const std::vector<FleetFinding>& all, const std::string& rule) {
  std::vector<FleetFinding> out;
  for (const auto& f : all)
    if (f.finding.rule == rule) out.push_back(f);
  return out;
}

TEST(FleetRules, HealthyJobsAcrossNodesHaveNoStraggler) {
  const auto findings = evaluate(with_jobs(healthy(4), 2));
  EXPECT_TRUE(findings.empty()) << findings.front().finding.summary;
}

TEST(FleetRules, StragglerOfAJobNamesTheJobAndCause) {
  auto s = with_jobs(healthy(4), 2);
  s.gpus[13].sm_clock_median_mhz = 1100;  // node1 GPU 5, job 100
  const auto f = above_info(evaluate(s));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.rule, "straggler");
  EXPECT_EQ(f[0].instance, "node1:9400");
  EXPECT_EQ(f[0].finding.gpus, std::vector<unsigned>{5});
  EXPECT_EQ(f[0].job, "slurm:100");
  EXPECT_NE(f[0].finding.summary.find("Slurm job 100 (16 GPUs on 2 nodes)"), std::string::npos)
      << f[0].finding.summary;
  EXPECT_NE(f[0].finding.cause.find("no clock event reason"), std::string::npos);
  EXPECT_NE(f[0].finding.fix.find("gpuclk fleet --job 100"), std::string::npos);
}

// Issue 44: two nodes running different jobs, one power-capped at 1365-1380 MHz, the other a
// lighter job near 1755 MHz. Compared across the whole range, the capped GPUs were called
// stragglers; within their own job, they run alike.
TEST(FleetRules, GpusOfDifferentJobsAreNotEachOthersPeers) {
  auto s = with_jobs(healthy(2), 1);
  for (auto& g : s.gpus) {
    const bool capped = g.instance == "node0:9400";
    g.sm_clock_median_mhz = capped ? 1365 + 2.0 * g.index : 1755;
    g.reason_fraction["sw_power_cap"] = capped ? 0.88 + 0.01 * g.index : 0.02;
  }
  EXPECT_TRUE(of_rule(evaluate(s), "straggler").empty());
  // One job across both nodes: now they are peers, and the capped ones are not the odd ones
  // out of eight against eight — but one GPU far below the rest is.
  auto one = with_jobs(healthy(2), 2);
  for (auto& g : one.gpus) g.sm_clock_median_mhz = 1755;
  one.gpus[3].sm_clock_median_mhz = 1380;
  one.gpus[3].reason_fraction["sw_power_cap"] = 0.97;
  const auto f = of_rule(evaluate(one), "straggler");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.gpus, std::vector<unsigned>{3});
  EXPECT_NE(f[0].finding.cause.find("power cap held it 97%"), std::string::npos)
      << f[0].finding.cause;
}

TEST(FleetRules, StragglerCauseNamesHeatLimitAndSettings) {
  auto s = with_jobs(healthy(4), 4);
  s.gpus[3].sm_clock_median_mhz = 1200;  // node0 GPU 3: hot
  s.gpus[3].reason_fraction["sw_thermal_slowdown"] = 0.9;
  s.gpus[12].sm_clock_median_mhz = 1300;  // node1 GPU 4: a lower power limit
  s.gpus[12].power_limit_w = 450;
  s.gpus[22].sm_clock_median_mhz = 1410;  // node2 GPU 6: lower application clocks
  s.gpus[22].app_sm_clock_mhz = 1410;
  const auto f = of_rule(evaluate(s), "straggler");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NE(f[0].finding.cause.find("heat"), std::string::npos) << f[0].finding.cause;
  EXPECT_NE(f[1].finding.cause.find("power limit (450 W)"), std::string::npos)
      << f[1].finding.cause;
  EXPECT_NE(f[2].finding.cause.find("application SM clock (1410 MHz)"), std::string::npos)
      << f[2].finding.cause;
}

TEST(FleetRules, StragglerByBusyShareWhenTheOthersWaitOnIt) {
  auto s = with_jobs(healthy(2), 2, 0.6);
  for (auto& u : s.jobs)
    if (u.instance == "node1:9400" && u.index == 2) u.busy_s = 0.97 * u.context_s;
  const auto f = of_rule(evaluate(s), "straggler");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].instance, "node1:9400");
  EXPECT_EQ(f[0].finding.gpus, std::vector<unsigned>{2});
  EXPECT_NE(f[0].finding.summary.find("they wait on it"), std::string::npos);
}

TEST(FleetRules, NeverAStragglerIdleUnallocatedOrAlone) {
  auto s = with_jobs(healthy(2), 2);
  // Idle in its job: held a context, ran nothing (and so a low clock).
  for (auto& u : s.jobs)
    if (u.instance == "node0:9400" && u.index == 1) u.busy_s = 0.01 * u.context_s;
  s.gpus[1].sm_clock_median_mhz = 345;
  // Unallocated: no job used it.
  std::erase_if(s.jobs, [](const JobUse& u) { return u.instance == "node1:9400" && u.index == 7; });
  s.gpus[15].sm_clock_median_mhz = 900;
  // Alone: a one-GPU job.
  for (auto& u : s.jobs)
    if (u.instance == "node1:9400" && u.index == 6) u.job = "slurm:999";
  s.gpus[14].sm_clock_median_mhz = 900;
  EXPECT_TRUE(of_rule(evaluate(s), "straggler").empty());
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
