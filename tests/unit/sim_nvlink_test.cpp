// The simulator's NVLink model (sim/model/nvlink.h): the [nvlink] table and the per-GPU faults
// as the loader reads them, what it refuses, and the data and error counters the model keeps.
#include <gtest/gtest.h>

#include <fstream>

#include "node_model.h"
#include "nvlink.h"
#include "scenario.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

namespace fs = std::filesystem;

TEST(sim_nvlink_test, the_2xh200_node_is_one_pair_of_18_links_at_26_562_gb_s) {
  const Scenario s = testing::load("2xh200");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_FALSE(s.nvswitch);
  for (const GpuConfig& g : s.gpus) {
    EXPECT_EQ(g.spec->name, "NVIDIA H200");
    EXPECT_EQ(g.spec->memory_total_bytes, 143771ULL * 1024 * 1024);
    EXPECT_EQ(g.nvlink.topology, NvLinkTopology::pairs);
    EXPECT_EQ(g.nvlink.links, 18u);
    EXPECT_DOUBLE_EQ(g.nvlink.gigabytes_per_s_per_link, 26.562);
    EXPECT_EQ(g.nvlink.down_mask, 0u);
    EXPECT_EQ(nvlink_links_to(g, g.index ^ 1U), 18u);
  }
  EXPECT_EQ(s.gpus[0].nvlink.partner, 1);
  EXPECT_EQ(s.gpus[1].nvlink.partner, 0);
  // The DL ECC counts the real host showed: there from power-on, not growing.
  EXPECT_EQ(nvlink_error_count(s.gpus[0], 9, NvLinkCounter::ecc_data, 0), 70u);
  EXPECT_EQ(nvlink_error_count(s.gpus[0], 9, NvLinkCounter::ecc_data, 3600), 70u);
  EXPECT_EQ(nvlink_error_count(s.gpus[0], 9, NvLinkCounter::replay, 3600), 0u);
}

TEST(sim_nvlink_test, a_link_down_at_one_end_of_a_pair_is_down_at_both) {
  const Scenario s = load_scenario(testing::scenarios_dir() / "doctor" / "nvlink-down.toml",
                                   {testing::scenarios_dir()});
  for (const GpuConfig& g : s.gpus) {
    EXPECT_FALSE(g.nvlink.up(7)) << g.index;
    EXPECT_TRUE(g.nvlink.up(6));
    EXPECT_EQ(nvlink_links_to(g, g.index ^ 1U), 17u);
    EXPECT_DOUBLE_EQ(p2p_bandwidth(g, g.index ^ 1U, 1), 17 * 26.562e9);
  }
}

TEST(sim_nvlink_test, an_error_counter_grows_at_its_rate_from_its_start) {
  const Scenario s = load_scenario(testing::scenarios_dir() / "doctor" / "nvlink-errors.toml",
                                   {testing::scenarios_dir()});
  const GpuConfig& g = s.gpus[1];
  EXPECT_EQ(nvlink_error_count(g, 4, NvLinkCounter::replay, 4), 0u);
  EXPECT_EQ(nvlink_error_count(g, 4, NvLinkCounter::replay, 5), 0u);
  EXPECT_EQ(nvlink_error_count(g, 4, NvLinkCounter::replay, 15), 20u);  // 2 a second
  EXPECT_EQ(nvlink_error_count(g, 3, NvLinkCounter::replay, 15), 0u);
  EXPECT_EQ(nvlink_error_count(s.gpus[0], 4, NvLinkCounter::replay, 15), 0u);
}

TEST(sim_nvlink_test, a_p2p_phase_moves_its_bytes_over_the_links_to_the_peer) {
  // Each rank sends 40 GiB to the other in every iteration, after 420 TFLOP of BF16 (~0.6 s).
  NodeModel model(std::make_shared<const Scenario>(testing::load("2xh200")));
  model.advance_to(2);
  EXPECT_EQ(nvlink_tx_bytes(model, 1, 0), 0);
  model.advance_to(20);
  for (std::size_t gpu = 0; gpu < 2; ++gpu) {
    SCOPED_TRACE(gpu);
    const std::size_t peer = gpu ^ 1U;
    double sent = 0, received_by_peer = 0;
    for (std::uint32_t k = 0; k < 18; ++k) {
      sent += nvlink_tx_bytes(model, gpu, k);
      received_by_peer += nvlink_rx_bytes(model, peer, k);
      // A pair shares its links: what one end sent over link k, the other received over it.
      EXPECT_DOUBLE_EQ(nvlink_rx_bytes(model, peer, k), nvlink_tx_bytes(model, gpu, k));
      EXPECT_DOUBLE_EQ(nvlink_tx_bytes(model, gpu, k), nvlink_tx_bytes(model, gpu, 0));  // even
    }
    EXPECT_GT(sent, 40.0 * (1ULL << 30));  // at least one exchange in 18 s
    EXPECT_DOUBLE_EQ(received_by_peer, sent);
    EXPECT_DOUBLE_EQ(sent, model.gpu(gpu).dynamics.nvlink_sent_to[peer]);
    // The links' 478 GB/s bound the phase: at most 18 s of it.
    EXPECT_LT(sent, 18 * 18 * 26.562e9);
  }
}

TEST(sim_nvlink_test, nvswitch_nodes_keep_their_18_links_to_the_switches) {
  const Scenario s = testing::load("default");
  EXPECT_TRUE(s.nvswitch);
  for (const GpuConfig& g : s.gpus) {
    EXPECT_EQ(g.nvlink.topology, NvLinkTopology::nvswitch);
    EXPECT_EQ(g.nvlink.links, 18u);
    EXPECT_EQ(nvlink_links_to(g, (g.index + 1) % 4), 18u);
  }
  // A node without NVSwitch and without [nvlink] has no links.
  for (const GpuConfig& g : testing::load("l4").gpus) EXPECT_EQ(g.nvlink.links, 0u);
}

class sim_nvlink_errors_test : public ::testing::Test {
 protected:
  std::string error_of(const std::string& text) {
    const fs::path file =
        fs::temp_directory_path() /
        ("gpuclk_sim_nvlink_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
    std::ofstream(file) << text;
    std::string what;
    try {
      load_scenario(file, {testing::scenarios_dir()});
    } catch (const ScenarioError& e) {
      what = e.what();
    }
    fs::remove(file);
    return what;
  }
  static constexpr const char* kNode = "[node]\ngpu_model = \"h200-sxm-141gb\"\ngpu_count = 2\n";
};

TEST_F(sim_nvlink_errors_test, the_new_keys_load_and_their_mistakes_are_refused) {
  const std::string node = kNode;
  EXPECT_EQ(error_of(node + "[nvlink]\ntopology = \"pairs\"\nlinks_per_gpu = 12\n"), "");
  // Unknown keys in the new tables are refused (a misspelt fault would be a healthy link).
  EXPECT_NE(error_of(node + "[nvlink]\ntopolgy = \"pairs\"\n").find("topolgy"), std::string::npos);
  EXPECT_NE(error_of(node + "[nvlink]\n[[gpu]]\nindex = 0\n"
                            "nvlink_errors = [{ link = 1, counter = \"replay\", rate = 3 }]\n")
                .find("rate"),
            std::string::npos);
  EXPECT_NE(error_of(node + "[nvlink]\ntopology = \"ring\"\n").find("topology"), std::string::npos);
  EXPECT_NE(error_of(node + "[nvlink]\nlinks_per_gpu = 19\n").find("links_per_gpu"),
            std::string::npos);
  EXPECT_NE(error_of(node + "nvswitch = true\n[nvlink]\ntopology = \"pairs\"\n").find("nvswitch"),
            std::string::npos);
  EXPECT_NE(error_of(node + "[nvlink]\nlinks_per_gpu = 4\n[[gpu]]\nindex = 1\nnvlink_down = [5]\n")
                .find("nvlink_down"),
            std::string::npos);
  EXPECT_NE(error_of(node + "[nvlink]\n[[gpu]]\nindex = 1\n"
                            "nvlink_errors = [{ link = 1, counter = \"parity\" }]\n")
                .find("counter"),
            std::string::npos);
  // No NVLink on the node: a fault on a link it lacks is an error, not silently healthy.
  EXPECT_NE(error_of(node + "[[gpu]]\nindex = 0\nnvlink_down = [0]\n").find("nvlink_down"),
            std::string::npos);
  // A p2p phase needs another GPU of the node as its peer.
  const std::string p2p = node +
                          "[nvlink]\n[gpu_defaults]\nworkload = \"w\"\n[workloads.w]\n"
                          "[[workloads.w.phases]]\nkind = \"p2p\"\ngib = 1\npeer = ";
  EXPECT_NE(error_of(p2p + "5\n").find("peer"), std::string::npos);
  EXPECT_NE(error_of(p2p + "0\n").find("peer 0"), std::string::npos);  // GPU 0 to itself
}

}  // namespace
}  // namespace gpuclk::sim
