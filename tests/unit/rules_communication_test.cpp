// communication_bound and late_rank (src/rules/rules_communication.cpp) on NCCL Inspector files
// the real plugin wrote (tests/data/nccl_inspector/): a planted late rank is named with its GPU
// and what held it back, a job on a slow link is communication-bound with the cause, a healthy
// job gets nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "rules/rule.h"
#include "telemetry/nccl_communicator.h"

namespace gpuclk::rules {
namespace {

namespace tn = telemetry::nccl;
using gpu::ClockReasons;

// The recording's communicator, its rank r joined to GPU r.
CommunicatorWindow window_of(const std::string& name) {
  std::string dir = GPUCLK_SOURCE_DIR;
  dir += "/tests/data/nccl_inspector/";
  dir += name;
  const auto parsed = tn::parse_inspector_directory(dir);
  auto comms = tn::build_communicators(parsed.records);
  EXPECT_EQ(comms.size(), 1u);
  std::map<unsigned, std::vector<tn::GpuRef>> held;
  for (const auto& m : comms.front().members)
    held[m.pid].push_back({unsigned(m.rank), "", std::nullopt});
  tn::attach_gpus(comms, held);
  CommunicatorWindow w;
  w.communicator = comms.front();
  w.job = "Slurm job 4242";
  return w;
}

// GPU `index` over 10 s: 100 samples at `mhz`, `util` busy, with `reasons` set.
GpuWindow gpu_window(unsigned index, double mhz = 1980, double util = 0.95,
                     std::uint64_t reasons = 0) {
  GpuWindow w;
  w.facts.index = index;
  w.facts.name = "NVIDIA H100 80GB HBM3";
  w.facts.max_sm_clock = units::Megahertz(1980);
  for (int i = 0; i < 100; ++i) {
    telemetry::FastSample s;
    s.time = telemetry::TimePoint(std::chrono::milliseconds(100 * i));
    s.sm_clock = units::Megahertz(mhz);
    s.gpu_utilization = units::Ratio(util);
    s.clock_reasons = ClockReasons(reasons);
    w.fast.push_back(s);
  }
  return w;
}

Input input_with(std::vector<GpuWindow> gpus, std::vector<CommunicatorWindow> comms) {
  Input in;
  in.from = telemetry::TimePoint(std::chrono::seconds(0));
  in.to = telemetry::TimePoint(std::chrono::seconds(10));
  in.gpus = std::move(gpus);
  in.communicators = std::move(comms);
  return in;
}

std::vector<Finding> run(const Input& in, std::string_view rule) {
  return evaluate(in, {find_rule(rule)});
}

const Evidence* evidence(const Finding& f, std::string_view key) {
  for (const auto& e : f.evidence)
    if (e.key == key) return &e;
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(rules_communication_test, the_planted_late_rank_is_named_with_its_gpu) {
  const Input in = input_with({gpu_window(0), gpu_window(1), gpu_window(2), gpu_window(3)},
                              {window_of("late_rank_4gpu")});
  const auto f = run(in, "late_rank");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::warning);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{2});
  EXPECT_TRUE(contains(f[0].summary, "GPU 2 (rank 2, pid "));
  EXPECT_TRUE(contains(f[0].summary,
                       "of communicator (0xe62dedaa97644a, 4 ranks) of Slurm job "
                       "4242 arrives last at 10 of its 10 delayed collectives"));
  EXPECT_TRUE(contains(f[0].summary, "the others wait 0.12"));
  EXPECT_NEAR(evidence(f[0], "lateness_ms")->value, 12, 1.5);
  EXPECT_EQ(evidence(f[0], "arrival_method")->text, "execution_time");
  // Its GPU ran like the others: the hardware is not the cause.
  EXPECT_TRUE(contains(f[0].cause, "the hardware shows no cause"));
  EXPECT_EQ(f[0].docs, "docs/doctor.md#late_rank");
}

TEST(rules_communication_test, what_held_the_late_gpu_back_is_the_cause) {
  const CommunicatorWindow w = window_of("late_rank_4gpu");
  Input hot =
      input_with({gpu_window(0), gpu_window(1),
                  gpu_window(2, 1410, 0.95, ClockReasons::sw_thermal_slowdown), gpu_window(3)},
                 {w});
  auto f = run(hot, "late_rank");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause,
            "its GPU was held by thermal slowdown (SM clock 1410 MHz, the others' 1980 MHz)");

  Input slow = input_with({gpu_window(0), gpu_window(1), gpu_window(2, 1500), gpu_window(3)}, {w});
  f = run(slow, "late_rank");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause,
            "its GPU ran at a lower clock than the others' (SM clock 1500 MHz, the "
            "others' 1980 MHz)");

  Input starved =
      input_with({gpu_window(0), gpu_window(1), gpu_window(2, 1980, 0.55), gpu_window(3)}, {w});
  f = run(starved, "late_rank");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause.rfind("its GPU was busy 55% of the time against the others' 95%", 0), 0u);
}

TEST(rules_communication_test, a_late_rank_whose_gpu_is_unknown_is_named_by_rank) {
  CommunicatorWindow w = window_of("late_rank_2gpu_plain");  // no traces: execution times
  for (auto& m : w.communicator.members) m.gpu.reset();
  const auto f = run(input_with({}, {w}), "late_rank");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].gpus.empty());
  EXPECT_TRUE(contains(f[0].summary, "rank 1 (pid "));
  EXPECT_TRUE(contains(f[0].summary, "its GPU is not known"));
  EXPECT_NEAR(evidence(f[0], "lateness_ms")->value, 20, 2);
  EXPECT_EQ(f[0].cause, "without its GPU gpuclk cannot say what held it back");
}

TEST(rules_communication_test, a_healthy_job_gets_nothing) {
  CommunicatorWindow w = window_of("healthy_2gpu");
  w.link_peak_bytes_per_second = 478.1e9;
  const Input in = input_with({gpu_window(0), gpu_window(1)}, {w});
  EXPECT_TRUE(run(in, "late_rank").empty());
  EXPECT_TRUE(run(in, "communication_bound").empty());
  EXPECT_TRUE(evaluate(in).empty());  // and no other rule sees anything either
}

// Two PCIe Gen4 x16 GPUs without NVLink, as comm_bound_pcie_2gpu was recorded for.
std::vector<GpuWindow> pcie_gpus() {
  std::vector<GpuWindow> gpus = {gpu_window(0), gpu_window(1)};
  for (auto& g : gpus) g.facts.pcie_link = g.facts.pcie_max = gpu::PcieLink{4, 16};
  return gpus;
}

CommunicatorWindow pcie_job(std::optional<double> peak = 31.5e9) {
  CommunicatorWindow w = window_of("comm_bound_pcie_2gpu");
  w.link_peak_bytes_per_second = peak;
  w.link_basis = "PCIe Gen4 x16: 16 x 1.969 GB/s (GPU 0)";
  return w;
}

TEST(rules_communication_test, a_job_on_a_slow_path_is_communication_bound_with_the_setting) {
  CommunicatorWindow w = pcie_job();
  w.nccl_environment = {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_DEBUG", "INFO"}};
  const auto f = run(input_with(pcie_gpus(), {w}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::warning);
  EXPECT_EQ(f[0].gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(contains(f[0].summary,
                       "communicator DP pcie (0x1c0ffee2b0b, 2 ranks) of Slurm job "
                       "4242: "));
  EXPECT_TRUE(contains(f[0].summary,
                       "% of the job's time in NCCL operations at 6.0 GB/s bus "
                       "bandwidth, 19% of its links' 31.5 GB/s"));
  EXPECT_GT(evidence(f[0], "nccl_time_pct")->value, 50);
  EXPECT_NEAR(evidence(f[0], "bus_bandwidth_gb_per_s")->value, 6.0, 0.3);
  EXPECT_EQ(evidence(f[0], "link_basis")->text, "PCIe Gen4 x16: 16 x 1.969 GB/s (GPU 0)");
  EXPECT_EQ(f[0].cause.rfind("NCCL_P2P_DISABLE=1 (peer-to-peer off", 0), 0u);
  EXPECT_TRUE(contains(f[0].cause, "is set for the job"));
}

TEST(rules_communication_test, the_link_or_topology_is_the_cause_without_a_setting) {
  auto gpus = pcie_gpus();
  gpus[1].facts.pcie_link = gpu::PcieLink{4, 8};
  auto f = run(input_with(gpus, {pcie_job()}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause, "GPU 1's PCIe link runs Gen4 x8, below its Gen4 x16");

  gpus = pcie_gpus();
  gpus[0].facts.numa_node = 0;
  gpus[1].facts.numa_node = 1;
  f = run(input_with(gpus, {pcie_job()}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause.rfind("its GPUs hang off different NUMA nodes (GPU 0 and GPU 1)", 0), 0u);

  f = run(input_with(pcie_gpus(), {pcie_job()}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause.rfind("no cause gpuclk sees", 0), 0u);
}

TEST(rules_communication_test, at_the_links_speed_or_without_a_peak_it_is_only_info) {
  auto f = run(input_with(pcie_gpus(), {pcie_job(7e9)}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::info);
  EXPECT_EQ(f[0].cause.rfind("the links carry what they can", 0), 0u);
  f = run(input_with(pcie_gpus(), {pcie_job(std::nullopt)}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::info);
  EXPECT_EQ(f[0].cause.rfind("the links' peak is unknown", 0), 0u);
}

TEST(rules_communication_test, waiting_for_a_late_rank_is_not_a_slow_link) {
  // The late rank's waits fill the others' time in NCCL; the transfers themselves ran at
  // ~330 GB/s. Given a shorter wall time the share passes 25 %, but the links are fine.
  CommunicatorWindow w = window_of("late_rank_4gpu");
  w.link_peak_bytes_per_second = 478.1e9;
  w.wall_seconds = 0.3;
  const auto f = run(input_with({}, {w}), "communication_bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::info);
  EXPECT_GT(evidence(f[0], "pct_of_peak")->value, 50);
  // Without a wall time, its records' own span says ~23 %: below the threshold.
  w.wall_seconds.reset();
  EXPECT_TRUE(run(input_with({}, {w}), "communication_bound").empty());
}

TEST(rules_communication_test, dump_times_written_at_teardown_are_no_wall_time) {
  CommunicatorWindow w = pcie_job();
  // As if the plugin had written everything at the end: every record's time the same.
  for (auto& m : w.communicator.members) m.first_us = m.last_us = 1000;
  w.communicator.first_us = w.communicator.last_us = 1000;
  w.communicator.span_from_dump_times = true;
  EXPECT_TRUE(run(input_with(pcie_gpus(), {w}), "communication_bound").empty());
  w.wall_seconds = 0.5;  // the service knows the job's time
  EXPECT_EQ(run(input_with(pcie_gpus(), {w}), "communication_bound").size(), 1u);
}

TEST(rules_communication_test, both_rules_are_registered_and_explained) {
  for (const char* name : {"communication_bound", "late_rank"}) {
    const Rule* r = find_rule(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_FALSE(r->title.empty());
    EXPECT_TRUE(contains(std::string(r->explanation), "Severity:"));
  }
}

}  // namespace
}  // namespace gpuclk::rules
