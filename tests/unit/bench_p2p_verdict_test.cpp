// bench p2p's reports from hand-built results: shares of peak, and a verdict naming the cause of
// a shortfall (no peer access, NVLinks down, PCIe below its max, a remote NUMA node).
#include <gtest/gtest.h>

#include "bench/p2p_report.h"

namespace gpuclk::bench::p2p {
namespace {

Measured measured(Figure f, double value) {
  Measured m;
  m.figure = f;
  m.samples = {value * 0.99, value, value * 1.01};
  m.summary = summarize(m.samples);
  m.bytes_per_copy = std::size_t(512) << 20;
  m.verified = true;
  return m;
}

GpuLinks h200(unsigned index) {
  GpuLinks g;
  g.index = index;
  g.cuda_ordinal = int(index);
  g.pcie_idle = gpu::PcieLink{5, 16};
  g.pcie_max = gpu::PcieLink{5, 16};
  g.numa_node = int(index);
  g.nvlinks = 18;
  g.nvlink_bytes_per_second_per_link = 26.562e9;
  return g;
}

PeerResult nv18_pair() {
  PeerResult r;
  r.device = 0, r.peer = 1, r.peer_access = true;
  r.figures = {measured(Figure::ce_read, 394e9),          measured(Figure::ce_write, 396e9),
               measured(Figure::ce_bidirectional, 779e9), measured(Figure::sm_read, 376e9),
               measured(Figure::sm_write, 380e9),         measured(Figure::sm_bidirectional, 740e9),
               measured(Figure::latency, 828e-9)};
  return r;
}

const FigureReport& figure(const std::vector<FigureReport>& figures, Figure f) {
  for (const auto& x : figures)
    if (x.figure == f) return x;
  throw std::logic_error("figure missing");
}

bool mentions(const std::vector<std::string>& verdicts, const std::string& text) {
  for (const auto& v : verdicts)
    if (v.find(text) != std::string::npos) return true;
  return false;
}

const PairLinks kNv18{0, 1, 18, 26.562e9};

TEST(bench_p2p_verdict_test, healthy_nv18_pair_has_shares_and_no_verdict) {
  const PairReport r = make_pair_report(nv18_pair(), h200(0), h200(1), &kNv18, "NV18");
  EXPECT_TRUE(r.verdicts.empty()) << r.verdicts.front();
  const FigureReport& read = figure(r.figures, Figure::ce_read);
  EXPECT_NEAR(*read.fraction_of_peak, 394 / 478.116, 1e-4);
  // Both directions at once: twice the per-direction peak.
  const FigureReport& both = figure(r.figures, Figure::ce_bidirectional);
  EXPECT_NEAR(both.peak->bytes_per_second, 2 * 478.116e9, 1e6);
  EXPECT_EQ(both.peak->basis, "2 directions x 18 NVLinks x 26.562 GB/s");
  // Latency has no peak.
  EXPECT_FALSE(figure(r.figures, Figure::latency).peak);
  EXPECT_NEAR(*figure(r.figures, Figure::latency).value, 828e-9, 1e-12);
}

TEST(bench_p2p_verdict_test, no_peer_access_says_staged_and_skips_sm_figures) {
  PeerResult result;
  result.device = 0, result.peer = 1, result.peer_access = false;
  result.figures = {measured(Figure::ce_read, 20e9), measured(Figure::ce_write, 20e9),
                    measured(Figure::ce_bidirectional, 30e9)};
  const PairReport r = make_pair_report(result, h200(0), h200(1), &kNv18, "NV18");
  EXPECT_TRUE(mentions(r.verdicts, "peer access between GPU 0 and GPU 1 is not possible"));
  EXPECT_TRUE(mentions(r.verdicts, "stages copies through host memory"));
  EXPECT_EQ(figure(r.figures, Figure::sm_read).skipped, "needs peer access");
  EXPECT_FALSE(figure(r.figures, Figure::latency).value);
  // Staged copies are bounded by PCIe, not by the NVLinks.
  EXPECT_EQ(figure(r.figures, Figure::ce_read).peak->link, Peak::Link::pcie);
}

TEST(bench_p2p_verdict_test, nvlinks_down_are_named) {
  GpuLinks a = h200(0);
  a.nvlinks_down = 2;
  const PairLinks sixteen{0, 1, 16, 26.562e9};
  const PairReport r = make_pair_report(nv18_pair(), a, h200(1), &sixteen, "NV16");
  EXPECT_TRUE(mentions(r.verdicts, "GPU 0 has 2 of its 18 NVLinks down"));
  EXPECT_NEAR(figure(r.figures, Figure::ce_read).peak->bytes_per_second, 16 * 26.562e9, 1e3);
}

TEST(bench_p2p_verdict_test, a_pcie_pair_names_the_path_and_a_degraded_link) {
  GpuLinks a = h200(0), b = h200(1);
  a.nvlinks = b.nvlinks = 0;
  b.pcie_loaded = gpu::PcieLink{4, 8};
  PeerResult result = nv18_pair();
  for (auto& m : result.figures) m.summary.median = m.figure == Figure::latency ? 2e-6 : 12e9;
  const PairReport r = make_pair_report(result, a, b, nullptr, "SYS");
  EXPECT_TRUE(
      mentions(r.verdicts, "no NVLink between GPU 0 and GPU 1: peer traffic crosses PCIe (SYS)"));
  EXPECT_TRUE(
      mentions(r.verdicts, "GPU 1's PCIe link runs Gen4 x8 under load, below the Gen5 x16"));
  // No generic "short of peak" line once a cause is named.
  EXPECT_FALSE(mentions(r.verdicts, "gpuclk sees no cause"));
}

TEST(bench_p2p_verdict_test, short_of_peak_without_a_cause_says_so) {
  PeerResult result = nv18_pair();
  result.figures[0].summary.median = 200e9;  // CE read at 42 %
  const PairReport r = make_pair_report(result, h200(0), h200(1), &kNv18, "NV18");
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_TRUE(mentions(r.verdicts, "CE read reaches 42% of its peak and gpuclk sees no cause"));
}

TEST(bench_p2p_verdict_test, bad_data_is_a_verdict) {
  PeerResult result = nv18_pair();
  result.figures[3].verified = false;
  const PairReport r = make_pair_report(result, h200(0), h200(1), &kNv18, "NV18");
  EXPECT_TRUE(mentions(r.verdicts, "SM read: the copy's destination differs from its source"));
}

HostResult host(std::optional<int> node, double h2d, double d2h) {
  HostResult r;
  r.device = 0;
  r.numa_node = node;
  r.numa_bound = node.has_value();
  r.figures = {measured(Figure::host_to_device, h2d), measured(Figure::device_to_host, d2h)};
  return r;
}

TEST(bench_p2p_verdict_test, host_rows_on_the_local_node_are_fine) {
  const HostReport r = make_host_report(host(0, 55e9, 55e9), h200(0), nullptr, 2);
  EXPECT_TRUE(r.local);
  EXPECT_TRUE(r.verdicts.empty());
  EXPECT_NEAR(*figure(r.figures, Figure::host_to_device).fraction_of_peak, 55 / 63.008, 1e-4);
}

TEST(bench_p2p_verdict_test, a_remote_node_is_priced_against_the_local_row) {
  const GpuLinks g = h200(0);
  const HostReport local = make_host_report(host(0, 55e9, 55e9), g, nullptr, 2);
  const HostReport remote = make_host_report(host(1, 44e9, 50e9), g, &local, 2);
  EXPECT_FALSE(remote.local);
  ASSERT_FALSE(remote.verdicts.empty());
  EXPECT_EQ(remote.verdicts.front(),
            "wrong NUMA node: host memory on node 1, GPU 0 is attached to node 0: host->device "
            "20% slower, device->host 9% slower than from its own node");
}

TEST(bench_p2p_verdict_test, unknown_gpu_node_on_a_multi_node_host_is_flagged) {
  GpuLinks g = h200(0);
  g.numa_node.reset();
  EXPECT_TRUE(mentions(make_host_report(host(std::nullopt, 55e9, 55e9), g, nullptr, 2).verdicts,
                       "NUMA node is unknown"));
  EXPECT_TRUE(make_host_report(host(std::nullopt, 55e9, 55e9), g, nullptr, 1).verdicts.empty());
}

TEST(bench_p2p_verdict_test, a_degraded_host_link_is_named) {
  GpuLinks g = h200(0);
  g.pcie_loaded = gpu::PcieLink{3, 16};
  const HostReport r = make_host_report(host(0, 13e9, 13e9), g, nullptr, 2);
  EXPECT_TRUE(
      mentions(r.verdicts, "GPU 0's PCIe link runs Gen3 x16 under load, below the Gen5 x16"));
  // Against the running link the copies are near their peak.
  EXPECT_NEAR(*figure(r.figures, Figure::host_to_device).fraction_of_peak, 13 / 15.76, 1e-3);
}

}  // namespace
}  // namespace gpuclk::bench::p2p
