// telemetry/nccl.h: nccl-tests' bus factors, the Inspector's names and message sizes, the NCCL
// settings that bound bandwidth, version codes.
#include <gtest/gtest.h>

#include "telemetry/nccl.h"

namespace gpuclk::telemetry::nccl {
namespace {

TEST(telemetry_nccl_test, bus_factors_are_nccl_tests_performance_md) {
  // doc/PERFORMANCE.md: all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n;
  // broadcast, reduce 1.
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_to_all, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::send_recv, 8), 1.0);
  // One rank: nothing crosses a link.
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_reduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_gather, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Operation::all_reduce, 0), 0.0);
}

TEST(telemetry_nccl_test, per_rank_messages_count_every_rank) {
  // The Inspector's message of an all-gather is one rank's part (its inspector.cc multiplies).
  EXPECT_DOUBLE_EQ(algorithm_bytes(Operation::all_gather, 1000, 4), 4000);
  EXPECT_DOUBLE_EQ(algorithm_bytes(Operation::reduce_scatter, 1000, 4), 4000);
  EXPECT_DOUBLE_EQ(algorithm_bytes(Operation::all_to_all, 1000, 4), 4000);
  EXPECT_DOUBLE_EQ(algorithm_bytes(Operation::all_reduce, 1000, 4), 1000);
  EXPECT_DOUBLE_EQ(algorithm_bytes(Operation::send, 1000, 4), 1000);
}

TEST(telemetry_nccl_test, names_round_trip) {
  for (const auto& o : all_operations()) {
    EXPECT_EQ(parse_key(o.key), o.operation);
    EXPECT_EQ(parse_inspector_name(o.inspector_name), o.operation);
    EXPECT_EQ(&info(o.operation), &o);
  }
  EXPECT_EQ(parse_inspector_name("All2All"), Operation::all_to_all);
  EXPECT_FALSE(parse_inspector_name("Invalid"));
  EXPECT_FALSE(parse_key("allreduce"));
  EXPECT_EQ(info(Operation::send_recv).nccl_tests, "sendrecv_perf");
}

TEST(telemetry_nccl_test, settings_that_bound_bandwidth_are_named_defaults_are_not) {
  const auto none = bandwidth_settings({{"NCCL_P2P_DISABLE", "0"}, {"NCCL_DEBUG", "INFO"}});
  EXPECT_TRUE(none.empty());
  const auto found = bandwidth_settings({{"NCCL_ALGO", "Ring"},
                                         {"NCCL_P2P_DISABLE", "1"},
                                         {"NCCL_P2P_LEVEL", "LOC"},
                                         {"NCCL_NVLS_ENABLE", "0"}});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].name, "NCCL_P2P_DISABLE");  // the table's order, not the map's
  EXPECT_TRUE(found[0].limits);
  EXPECT_EQ(found[1].name, "NCCL_P2P_LEVEL");
  EXPECT_NE(found[1].effect.find("never between GPUs"), std::string::npos);
  EXPECT_EQ(found[2].name, "NCCL_ALGO");
  EXPECT_FALSE(found[2].limits);  // it steers
  EXPECT_EQ(found[3].name, "NCCL_NVLS_ENABLE");
  EXPECT_EQ(describe(found[0]).rfind("NCCL_P2P_DISABLE=1 (peer-to-peer off", 0), 0u);
  // SYS (or 5) allows every path: reported, but as no limit.
  EXPECT_FALSE(bandwidth_settings({{"NCCL_P2P_LEVEL", "5"}}).front().limits);
  EXPECT_TRUE(bandwidth_settings({{"NCCL_P2P_LEVEL", "nvl"}}).front().limits);
}

TEST(telemetry_nccl_test, version_codes_before_and_after_2_9) {
  EXPECT_EQ(version_text(22703), "2.27.3");
  EXPECT_EQ(version_text(21903), "2.19.3");
  EXPECT_EQ(version_text(2804), "2.8.4");
  EXPECT_EQ(version_text(0), "unknown");
}

}  // namespace
}  // namespace gpuclk::telemetry::nccl
