// bench p2p's measurements on real GPUs: every figure runs briefly, its copies arrive intact and
// its value is plausible. Peer cases need two GPUs (nvidia-h200-x2); skipped with a reason where
// there is no CUDA build, no GPU, or one GPU.
#include <gtest/gtest.h>

#include "bench/p2p.h"
#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench::p2p {
namespace {

Options short_run() {
  Options o;
  o.bytes = std::size_t(64) << 20;
  o.copies_per_sample = 4;
  o.warmup_copies = 1;
  o.samples = 2;
  o.latency_accesses = 10000;
  return o;
}

class bench_p2p_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
    try {
      devices_ = device_count();
    } catch (const Error& e) {
      GTEST_SKIP() << "no usable GPU: " << e.what();
    }
    if (devices_ < 1) GTEST_SKIP() << "no CUDA device";
  }
  int devices_ = 0;
};

void expect_bandwidth(const Measured& m, double at_least) {
  SCOPED_TRACE(std::string(info(m.figure).key));
  EXPECT_EQ(m.samples.size(), 2u);
  EXPECT_GT(m.summary.median, at_least);
  EXPECT_LT(m.summary.median, 20e12);  // nothing moves 20 TB/s
  ASSERT_TRUE(m.verified);
  EXPECT_TRUE(*m.verified);
}

TEST_F(bench_p2p_test, host_figures_run_and_arrive_intact) {
  int calls = 0;
  const HostResult r = measure_host(0, std::nullopt, true, short_run(), [&] { ++calls; });
  EXPECT_EQ(calls, 1);  // while_busy ran once, during the first sample
  ASSERT_EQ(r.figures.size(), 3u);
  EXPECT_EQ(r.figures[0].figure, Figure::host_to_device);
  expect_bandwidth(r.figures[0], 1e9);  // any PCIe x16 link since Gen2
  expect_bandwidth(r.figures[1], 1e9);
  expect_bandwidth(r.figures[2], 50e9);  // device memory
}

TEST_F(bench_p2p_test, host_buffer_on_each_numa_node) {
  const std::vector<int> nodes = numa_nodes();
  if (nodes.empty()) GTEST_SKIP() << "no NUMA (libnuma missing or a kernel without it)";
  for (int node : nodes) {
    const HostResult r = measure_host(0, node, false, short_run());
    EXPECT_TRUE(r.numa_bound);
    ASSERT_EQ(r.figures.size(), 2u);
    expect_bandwidth(r.figures[0], 1e9);
  }
  try {
    (void)measure_host(0, nodes.back() + 1, false, short_run());
    FAIL() << "a node that does not exist was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
  }
}

TEST_F(bench_p2p_test, peer_figures_between_the_first_two_gpus) {
  if (devices_ < 2) GTEST_SKIP() << "one GPU: no peer (run on nvidia-h200-x2)";
  const PeerResult r = measure_peer(0, 1, short_run());
  ASSERT_GE(r.figures.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_bandwidth(r.figures[i], 1e9);
  if (!r.peer_access) GTEST_SKIP() << "no peer access: SM figures and latency not measured";
  ASSERT_EQ(r.figures.size(), 7u);
  for (std::size_t i = 3; i < 6; ++i) expect_bandwidth(r.figures[i], 1e9);
  const Measured& latency = r.figures[6];
  EXPECT_EQ(latency.figure, Figure::latency);
  EXPECT_GT(latency.summary.median, 100e-9);
  EXPECT_LT(latency.summary.median, 20e-6);
}

TEST_F(bench_p2p_test, progress_reports_every_sample) {
  Options o = short_run();
  int samples = 0;
  o.on_sample = [&](Figure, int device, int peer, int, int of) {
    EXPECT_EQ(device, 0);
    EXPECT_EQ(peer, -1);
    EXPECT_EQ(of, 2);
    ++samples;
  };
  (void)measure_host(0, std::nullopt, false, o);
  EXPECT_EQ(samples, 4);  // two figures, two samples each
}

}  // namespace
}  // namespace gpuclk::bench::p2p
