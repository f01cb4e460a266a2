// bench nccl's report (bench/nccl_report.h, nccl_verdicts.h): the peak each operation is set
// against on the topologies GPU nodes have, the verdict for each cause of a shortfall, the worst
// pair, the telemetry read during an operation. Hand-written link facts and run results.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/nccl_report.h"
#include "bench/nccl_verdicts.h"

namespace gpuclk::bench::nccl {
namespace {

constexpr double kH100Link = 26.562e9;  // per NVLink and direction (nvidia-smi nvlink -s)

p2p::GpuLinks gpu(unsigned index, gpu::PcieLink pcie = {5, 16}) {
  p2p::GpuLinks g;
  g.index = index;
  g.cuda_ordinal = int(index);
  g.name = "NVIDIA H100 80GB HBM3";
  g.pcie_idle = pcie;
  g.pcie_max = pcie;
  return g;
}

// Two H100s joined by 18 NVLinks (NV18).
Topology nv18_pair() {
  Topology t;
  for (unsigned i = 0; i < 2; ++i) {
    t.gpus.push_back(gpu(i));
    t.gpus.back().nvlinks = 18;
    t.gpus.back().nvlink_bytes_per_second_per_link = kH100Link;
  }
  t.nvlink_pairs.push_back({0, 1, 18, kH100Link});
  return t;
}

// `n` H100s on an NVSwitch fabric, 18 links each.
Topology hgx(unsigned n) {
  Topology t;
  for (unsigned i = 0; i < n; ++i) {
    t.gpus.push_back(gpu(i));
    t.gpus.back().nvlinks = 18;
    t.gpus.back().nvlink_bytes_per_second_per_link = kH100Link;
    t.gpus.back().nvswitch_links = 18;
    t.gpus.back().nvswitch_bytes_per_second = 18 * kH100Link;
  }
  return t;
}

Topology pcie_pair(gpu::PcieLink a = {4, 16}, gpu::PcieLink b = {4, 16}) {
  Topology t;
  t.gpus = {gpu(0, a), gpu(1, b)};
  return t;
}

std::vector<std::vector<bool>> access(std::size_t n, bool ok = true) {
  return std::vector<std::vector<bool>>(n, std::vector<bool>(n, ok));
}

// A run of `ops` at 1 MiB and `largest` bytes, the largest at `busbw` B/s out-of-place.
RunResult run_of(std::vector<Operation> ops, int ranks, double busbw,
                 std::size_t largest = std::size_t(1) << 30, std::uint64_t wrong = 0) {
  RunResult r;
  for (int i = 0; i < ranks; ++i) r.ordinals.push_back(i);
  r.peer_access = access(std::size_t(ranks));
  r.native_all_to_all = true;
  for (Operation op : ops) {
    OperationResult o;
    o.operation = op;
    for (std::size_t bytes : {std::size_t(1) << 20, largest}) {
      SizeResult s;
      s.counts = counts(op, bytes, ranks);
      // The time that gives `busbw`; 20 µs at 1 MiB (latency).
      const Bandwidth at_one_second = bandwidth(op, s.counts, 1.0, ranks);
      s.out_of_place.seconds =
          bytes == largest && at_one_second.bus > 0 ? at_one_second.bus / busbw : 20e-6;
      s.out_of_place.bandwidth = bandwidth(op, s.counts, s.out_of_place.seconds, ranks);
      s.out_of_place.wrong = wrong;
      if (has_in_place(op)) s.in_place = s.out_of_place;
      o.sizes.push_back(s);
    }
    r.operations.push_back(o);
  }
  return r;
}

RunOptions options_for(const RunResult& r) {
  RunOptions o;
  o.operations.clear();
  for (const auto& op : r.operations) o.operations.push_back(op.operation);
  o.sizes = {std::size_t(1) << 20, r.operations.front().sizes.back().counts.bytes};
  return o;
}

bool has(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(bench_nccl_report_test, an_nvlink_pair_is_priced_at_its_links) {
  const auto peak = collective_peak(nv18_pair(), access(2));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->link, p2p::Peak::Link::nvlink);
  EXPECT_NEAR(peak->bytes_per_second, 478.1e9, 0.1e9);
  EXPECT_EQ(peak->basis, "18 NVLinks x 26.562 GB/s to the other GPUs (GPU 0)");
  EXPECT_NEAR(pair_peak(nv18_pair(), 0, 1, true)->bytes_per_second, 478.1e9, 0.1e9);
  EXPECT_NEAR(ring_peak(nv18_pair(), access(2))->bytes_per_second, 478.1e9, 0.1e9);
}

TEST(bench_nccl_report_test, a_switch_fabric_is_priced_at_each_gpus_links_to_it) {
  Topology t = hgx(8);
  t.gpus[5].nvswitch_links = 16;  // two links down on GPU 5
  t.gpus[5].nvswitch_bytes_per_second = 16 * kH100Link;
  const auto peak = collective_peak(t, access(8));
  ASSERT_TRUE(peak);
  EXPECT_NEAR(peak->bytes_per_second, 16 * kH100Link, 1);
  EXPECT_NE(peak->basis.find("to the NVSwitches (GPU 5)"), std::string::npos);
}

TEST(bench_nccl_report_test, a_mesh_sums_each_gpus_direct_links) {
  Topology t;
  for (unsigned i = 0; i < 4; ++i) t.gpus.push_back(gpu(i));
  for (unsigned a = 0; a < 4; ++a)
    for (unsigned b = a + 1; b < 4; ++b) t.nvlink_pairs.push_back({a, b, 4, 25e9});
  const auto peak = collective_peak(t, access(4));
  ASSERT_TRUE(peak);
  EXPECT_DOUBLE_EQ(peak->bytes_per_second, 3 * 4 * 25e9);  // three peers × NV4
  EXPECT_EQ(peak->basis, "12 NVLinks x 25.000 GB/s to the other GPUs (GPU 0)");
}

TEST(bench_nccl_report_test, gpus_nvlink_does_not_join_cross_pcie) {
  // Two bridged pairs (0-1, 2-3): a ring must cross PCIe somewhere.
  Topology t;
  for (unsigned i = 0; i < 4; ++i) t.gpus.push_back(gpu(i, {4, 16}));
  t.gpus[3].pcie_loaded = gpu::PcieLink{4, 8};
  t.nvlink_pairs = {{0, 1, 4, 25e9}, {2, 3, 4, 25e9}};
  const auto peak = collective_peak(t, access(4));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->link, p2p::Peak::Link::pcie);
  EXPECT_NEAR(peak->bytes_per_second, 8 * 1.969e9, 1e6);  // GPU 3's Gen4 x8 under load
  EXPECT_NE(peak->basis.find("(GPU 3)"), std::string::npos);
  // Without peer access NVLink cannot be used either.
  EXPECT_EQ(collective_peak(nv18_pair(), access(2, false))->link, p2p::Peak::Link::pcie);
  EXPECT_FALSE(collective_peak(Topology{{gpu(0)}, {}}, access(1)));  // one GPU: no link
}

TEST(bench_nccl_report_test, within_reach_of_the_peak_nothing_is_said_but_the_pairs) {
  RunResult run = run_of({Operation::all_reduce, Operation::all_gather}, 2, 370e9);
  run.pairs = {{0, 1, 1 << 30, 0.003, 358e9, 0}, {1, 0, 1 << 30, 0.003, 357e9, 0}};
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {});
  ASSERT_EQ(r.operations.size(), 2u);
  EXPECT_NEAR(*r.operations[0].fraction_of_peak, 370.0 / 478.1, 0.001);
  EXPECT_EQ(r.operations[0].judged_bytes, std::size_t(1) << 30);
  EXPECT_DOUBLE_EQ(r.operations[0].smallest_seconds, 20e-6);
  EXPECT_TRUE(r.notes.empty());
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].rfind("worst send/recv pair: GPU 1 -> GPU 0, 357.00 GB/s, 75% of "
                                "478.12 GB/s",
                                0),
            0u);
  EXPECT_FALSE(has(r.verdicts, "look at that pair's links"));  // within 80 % of the best
  EXPECT_FALSE(any_wrong(r));
}

TEST(bench_nccl_report_test, a_shortfall_without_a_cause_says_so) {
  const RunResult run = run_of({Operation::all_reduce}, 2, 150e9);
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {});
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0],
            "all-reduce reaches 31% of its peak at 1 GiB (150.00 of 478.12 GB/s, 18 NVLinks x "
            "26.562 GB/s to the other GPUs (GPU 0)) and gpuclk sees no cause (another process on "
            "these GPUs or their links?)");
}

TEST(bench_nccl_report_test, a_setting_in_the_environment_is_named_as_the_cause) {
  const RunResult run = run_of({Operation::all_reduce}, 2, 20e9);
  const NcclReport r =
      make_report(run, options_for(run), nv18_pair(),
                  {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_ALGO", "Tree"}, {"NCCL_DEBUG", "WARN"}});
  ASSERT_EQ(r.settings.size(), 2u);
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].rfind("NCCL_P2P_DISABLE=1 (peer-to-peer off", 0), 0u);
  EXPECT_NE(r.verdicts[0].find("is set in the environment NCCL ran with"), std::string::npos);
  EXPECT_NE(r.verdicts[1].find("NCCL_ALGO=Tree"), std::string::npos);
  EXPECT_NE(r.verdicts[1].find("unset it to let NCCL choose"), std::string::npos);
  EXPECT_FALSE(has(r.verdicts, "sees no cause"));  // a cause was named
}

TEST(bench_nccl_report_test, links_down_and_peer_access_off_are_causes) {
  Topology t = nv18_pair();
  t.gpus[1].nvlinks_down = 2;
  RunResult run = run_of({Operation::all_reduce}, 2, 150e9);
  NcclReport r = make_report(run, options_for(run), t, {});
  EXPECT_TRUE(has(r.verdicts, "GPU 1 has 2 of its 18 NVLinks down: the peak counts the 16 up"));
  EXPECT_FALSE(has(r.verdicts, "sees no cause"));

  run.peer_access = {{true, false}, {false, true}};
  r = make_report(run, options_for(run), nv18_pair(), {});
  EXPECT_TRUE(has(r.verdicts,
                  "peer access between GPU 0 and GPU 1 is not possible: NCCL stages "
                  "their traffic through host memory"));
  EXPECT_EQ(r.operations[0].peak->link, p2p::Peak::Link::pcie);
  EXPECT_FALSE(has(r.verdicts, "NVLink does not join"));  // the access is the cause
}

TEST(bench_nccl_report_test, over_pcie_a_degraded_link_and_numa_nodes_are_causes) {
  Topology t = pcie_pair();
  t.gpus[1].pcie_loaded = gpu::PcieLink{4, 8};
  t.gpus[0].numa_node = 0;
  t.gpus[1].numa_node = 1;
  const RunResult run = run_of({Operation::all_reduce}, 2, 10e9);
  const NcclReport r = make_report(run, options_for(run), t, {});
  EXPECT_TRUE(has(r.verdicts, "no NVLink between the GPUs: the collectives cross PCIe"));
  EXPECT_TRUE(has(r.verdicts,
                  "GPU 1's PCIe link runs Gen4 x8 under load, below the Gen4 x16 it "
                  "and its slot can reach"));
  EXPECT_TRUE(has(r.verdicts,
                  "the GPUs hang off different NUMA nodes (GPU 0 on node 0, GPU 1 on "
                  "node 1)"));
  EXPECT_NEAR(r.operations[0].peak->bytes_per_second, 8 * 1.969e9, 1e6);
}

TEST(bench_nccl_report_test, throttled_clocks_during_an_operation_are_a_cause) {
  const RunResult run = run_of({Operation::all_reduce}, 2, 150e9);
  GpuTelemetry hot;
  hot.gpu = 1;
  hot.sm_clock_mhz = 1290;
  hot.reasons = {{"sw_thermal_slowdown", 0.35}, {"gpu_idle", 0.9}};
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {}, {{GpuTelemetry{}, hot}});
  EXPECT_TRUE(has(r.verdicts,
                  "GPU 1 was held by thermal slowdown 35% of all-reduce's run (SM "
                  "clock 1290 MHz)"));
  EXPECT_FALSE(has(r.verdicts, "gpu_idle"));
}

TEST(bench_nccl_report_test, wrong_results_come_first_and_fail_the_run) {
  RunResult run = run_of({Operation::reduce_scatter}, 2, 370e9, std::size_t(1) << 30, 3);
  run.pairs = {{0, 1, 1 << 20, 1e-4, 10e9, 0}, {1, 0, 1 << 20, 1e-4, 10e9, 1}};
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {});
  EXPECT_TRUE(any_wrong(r));
  EXPECT_EQ(r.operations[0].wrong, 12u);  // 3 at each size and placement
  EXPECT_EQ(r.verdicts[0].rfind("reduce-scatter: 12 elements wrong: do not trust", 0), 0u);
  EXPECT_TRUE(has(r.verdicts, "send/recv GPU 1 -> GPU 0: 1 elements wrong"));
}

TEST(bench_nccl_report_test, one_gpu_is_a_degenerate_run_with_a_note) {
  const RunResult run = run_of({Operation::all_reduce, Operation::all_to_all}, 1, 1e12);
  const NcclReport r = make_report(run, options_for(run), Topology{{gpu(3)}, {}}, {});
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].rfind("one GPU (GPU 3): NCCL runs with one rank", 0), 0u);
  EXPECT_FALSE(r.operations[0].peak);
  EXPECT_EQ(r.operations[0].sizes.back().out_of_place.bandwidth.bus, 0);  // factor 0
  EXPECT_TRUE(r.verdicts.empty());
}

TEST(bench_nccl_report_test, small_sizes_get_no_bandwidth_verdict) {
  const RunResult run = run_of({Operation::all_reduce}, 2, 50e9, std::size_t(4) << 20);
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {});
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0],
            "the largest size (4 MiB) is latency-bound: no verdict on bandwidth "
            "(give --sizes up to 1G or more for one)");
}

TEST(bench_nccl_report_test, all_reduce_past_the_links_on_a_switch_is_nvls) {
  const RunResult run = run_of({Operation::all_reduce}, 8, 520e9);
  const NcclReport r = make_report(run, options_for(run), hgx(8), {});
  EXPECT_TRUE(has(r.verdicts,
                  "all-reduce passes the links' peak (109%): NVLink SHARP (NVLS) "
                  "reduces in the NVSwitches"));
}

TEST(bench_nccl_report_test, the_worst_pair_is_named_against_its_own_peak) {
  RunResult run = run_of({Operation::send_recv}, 4, 370e9);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b)
        run.pairs.push_back({a, b, 1 << 30, 0.003, (a == 2 && b == 3) ? 200e9 : 380e9, 0});
  const NcclReport r = make_report(run, options_for(run), hgx(4), {});
  ASSERT_TRUE(r.worst_pair);
  EXPECT_EQ(r.pairs[*r.worst_pair].gpu, 2u);
  EXPECT_EQ(r.pairs[*r.worst_pair].peer, 3u);
  EXPECT_NEAR(*r.pairs[*r.worst_pair].fraction_of_peak, 200 / 478.116, 0.001);
  EXPECT_TRUE(has(r.verdicts,
                  "worst send/recv pair: GPU 2 -> GPU 3, 200.00 GB/s, 42% of 478.12 "
                  "GB/s"));
  EXPECT_TRUE(has(r.verdicts, ": look at that pair's links (gpuclk topo, gpuclk bench p2p)"));
  // nccl-tests' sendrecv ring is priced at its slowest hop.
  EXPECT_NEAR(r.operations[0].peak->bytes_per_second, 478.1e9, 0.1e9);
}

TEST(bench_nccl_report_test, latency_is_the_smallest_size_that_moves_data) {
  // all_gather_perf's 8 B on 2 ranks rounds to 0 elements per rank: NCCL returns at once.
  RunResult run = run_of({Operation::all_gather}, 2, 370e9);
  SizeResult empty;
  empty.counts = counts(Operation::all_gather, 8, 2);
  empty.out_of_place.seconds = 0.6e-6;
  run.operations[0].sizes.insert(run.operations[0].sizes.begin(), empty);
  const NcclReport r = make_report(run, options_for(run), nv18_pair(), {});
  EXPECT_EQ(r.operations[0].sizes.front().counts.param, 0u);
  EXPECT_DOUBLE_EQ(r.operations[0].smallest_seconds, 20e-6);  // 1 MiB's, not 0 B's
}

TEST(bench_nccl_report_test, telemetry_of_a_window_has_clocks_power_and_nvlink_traffic) {
  telemetry::Summary s;
  s.sm_clock = telemetry::ClockStatistics{};
  s.sm_clock->median = units::Megahertz(1980);
  s.power_mean = units::Watts(412.5);
  s.temperature_max = units::Celsius(61);
  s.clock_reasons = {{gpu::ClockReasons::sw_power_cap, units::Ratio(0.25)}};
  std::vector<telemetry::SlowSample> slow(3);
  for (int i = 0; i < 3; ++i) {
    slow[std::size_t(i)].time = telemetry::TimePoint(std::chrono::milliseconds(500 * i));
    for (unsigned link = 0; link < 2; ++link) {
      telemetry::NvLinkSample l;
      l.link = link;
      l.tx_bytes = std::uint64_t(i) * 100'000'000'000ull;  // 100 GB per link per 0.5 s
      l.rx_bytes = std::uint64_t(i) * 50'000'000'000ull;
      slow[std::size_t(i)].nvlinks.push_back(l);
    }
  }
  const GpuTelemetry g = gpu_telemetry(4, s, slow);
  EXPECT_EQ(g.gpu, 4u);
  EXPECT_DOUBLE_EQ(*g.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(*g.power_w, 412.5);
  EXPECT_DOUBLE_EQ(*g.temperature_c, 61);
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0].first, "sw_power_cap");
  EXPECT_DOUBLE_EQ(*g.nvlink_tx_bytes_per_second, 400e9);  // 2 links × 200 GB/s
  EXPECT_DOUBLE_EQ(*g.nvlink_rx_bytes_per_second, 200e9);
  // One sample, or none with counters: no rate.
  EXPECT_FALSE(gpu_telemetry(4, s, {slow[0]}).nvlink_tx_bytes_per_second);
  EXPECT_FALSE(gpu_telemetry(4, s, {}).nvlink_rx_bytes_per_second);
}

}  // namespace
}  // namespace gpuclk::bench::nccl
