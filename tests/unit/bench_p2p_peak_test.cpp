// Peaks of bench p2p from link facts: PCIe generation x width, NVLinks up x per-link speed.
#include <gtest/gtest.h>

#include "bench/p2p_report.h"

namespace gpuclk::bench::p2p {
namespace {

GpuLinks gpu_on(unsigned index, gpu::PcieLink link) {
  GpuLinks g;
  g.index = index;
  g.pcie_idle = link;
  g.pcie_max = gpu::PcieLink{5, 16};
  return g;
}

TEST(bench_p2p_peak_test, pcie_lane_rates_after_line_coding) {
  EXPECT_DOUBLE_EQ(*pcie_lane_bytes_per_second(3), 0.985e9);
  EXPECT_DOUBLE_EQ(*pcie_lane_bytes_per_second(4), 1.969e9);
  EXPECT_DOUBLE_EQ(*pcie_lane_bytes_per_second(5), 3.938e9);
  EXPECT_FALSE(pcie_lane_bytes_per_second(0));
  EXPECT_FALSE(pcie_lane_bytes_per_second(9));
}

TEST(bench_p2p_peak_test, pcie_peak_is_generation_times_width) {
  const auto p = pcie_peak({5, 16});
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->bytes_per_second, 63.008e9, 1e6);
  EXPECT_EQ(p->link, Peak::Link::pcie);
  EXPECT_EQ(p->basis, "PCIe Gen5 x16: 16 x 3.938 GB/s");
  EXPECT_NEAR(pcie_peak({4, 8})->bytes_per_second, 15.752e9, 1e6);
  EXPECT_FALSE(pcie_peak({5, 0}));
}

TEST(bench_p2p_peak_test, nvlink_peak_is_links_up_times_speed) {
  const Peak p = nvlink_peak(18, 26.562e9);
  EXPECT_NEAR(p.bytes_per_second, 478.116e9, 1e6);
  EXPECT_EQ(p.basis, "18 NVLinks x 26.562 GB/s");
  EXPECT_EQ(nvlink_peak(1, 25e9).basis, "1 NVLink x 25.000 GB/s");
}

TEST(bench_p2p_peak_test, peer_peak_prefers_direct_nvlinks) {
  const GpuLinks a = gpu_on(0, {5, 16}), b = gpu_on(1, {5, 16});
  const PairLinks direct{0, 1, 18, 26.562e9};
  const auto p = peer_peak(a, b, &direct, true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->link, Peak::Link::nvlink);
  EXPECT_NEAR(p->bytes_per_second, 478.116e9, 1e6);
}

TEST(bench_p2p_peak_test, peer_peak_through_nvswitch_takes_the_slower_side) {
  GpuLinks a = gpu_on(0, {5, 16}), b = gpu_on(1, {5, 16});
  a.nvswitch_links = 18, a.nvlink_bytes_per_second_per_link = 26.562e9;
  a.nvswitch_bytes_per_second = 18 * 26.562e9;
  b.nvswitch_links = 16, b.nvlink_bytes_per_second_per_link = 26.562e9;
  b.nvswitch_bytes_per_second = 16 * 26.562e9;
  const auto p = peer_peak(a, b, nullptr, true);
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->bytes_per_second, 16 * 26.562e9, 1e3);
  EXPECT_NE(p->basis.find("through NVSwitch (GPU 1)"), std::string::npos);
}

TEST(bench_p2p_peak_test, without_peer_access_nvlink_does_not_count) {
  const GpuLinks a = gpu_on(0, {5, 16}), b = gpu_on(1, {4, 16});
  const PairLinks direct{0, 1, 18, 26.562e9};
  const auto p = peer_peak(a, b, &direct, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->link, Peak::Link::pcie);
  EXPECT_NEAR(p->bytes_per_second, 16 * 1.969e9, 1e3);  // the slower side, GPU 1
  EXPECT_NE(p->basis.find("(GPU 1)"), std::string::npos);
}

TEST(bench_p2p_peak_test, host_peak_uses_the_link_under_load) {
  GpuLinks g = gpu_on(0, {1, 16});  // trained down at idle
  EXPECT_NEAR(host_peak(g)->bytes_per_second, 4e9, 1);
  g.pcie_loaded = gpu::PcieLink{5, 16};
  EXPECT_NEAR(host_peak(g)->bytes_per_second, 63.008e9, 1e6);
  g.pcie_idle.reset();
  g.pcie_loaded.reset();
  EXPECT_FALSE(host_peak(g));
}

}  // namespace
}  // namespace gpuclk::bench::p2p
