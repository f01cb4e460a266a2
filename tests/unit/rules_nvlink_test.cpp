// doctor's NVLink rules over hand-built windows: a pair with fewer links than the node's other
// pairs, error counters that grow (warning) or only corrected data-ECC errors that grow (info),
// and a GPU whose links are all down with no peer's up (no NVLink bridge: silent).
#include <gtest/gtest.h>

#include "rules/rule.h"

namespace gpuclk::rules {
namespace {

using namespace std::chrono_literals;

GpuWindow gpu(unsigned index) {
  GpuWindow w;
  w.facts.index = index;
  w.facts.name = "NVIDIA H200";
  w.facts.bus_id = "00000000:0" + std::to_string(index) + ":00.0";
  return w;
}

// A slow sample at t with `links` links, `up` of them up, and link 0's counters.
telemetry::SlowSample links(telemetry::TimePoint t, unsigned total, unsigned up,
                            std::uint64_t replay = 0, std::uint64_t ecc = 0) {
  telemetry::SlowSample s;
  s.time = t;
  for (unsigned k = 0; k < total; ++k) {
    telemetry::NvLinkSample l;
    l.link = k;
    l.active = k < up;
    l.replay = k == 0 ? replay : 0;
    l.ecc = k == 0 ? ecc : 0;
    s.nvlinks.push_back(l);
  }
  return s;
}

std::vector<Finding> run(const Input& in, const char* rule) {
  return evaluate(in, {find_rule(rule)});
}

TEST(rules_nvlink_test, a_pair_with_fewer_links_than_the_others_is_named) {
  Input in;
  in.to = in.from + 20s;
  for (unsigned i = 0; i < 4; ++i) in.gpus.push_back(gpu(i));
  // Two bridged pairs: 0-1 with 18 links, 2-3 with 12.
  in.gpus[0].facts.nvlink_peers[in.gpus[1].facts.bus_id] = 18;
  in.gpus[1].facts.nvlink_peers[in.gpus[0].facts.bus_id] = 18;
  in.gpus[2].facts.nvlink_peers[in.gpus[3].facts.bus_id] = 12;
  in.gpus[3].facts.nvlink_peers[in.gpus[2].facts.bus_id] = 12;
  const auto f = run(in, "nvlink_fewer_links");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(f[0].severity, Severity::warning);
  EXPECT_NE(f[0].summary.find("12 NVLinks where the node's other pairs have 18"),
            std::string::npos);
  // One pair alone has nothing to be compared with.
  in.gpus.resize(2);
  EXPECT_TRUE(run(in, "nvlink_fewer_links").empty());
}

TEST(rules_nvlink_test, growing_replays_warn_and_growing_ecc_alone_informs) {
  Input in;
  in.to = in.from + 60s;
  in.gpus = {gpu(0), gpu(1), gpu(2), gpu(3)};
  in.gpus[0].slow = {links(in.from, 18, 18, 5), links(in.to, 18, 18, 65)};           // replays
  in.gpus[1].slow = {links(in.from, 18, 18, 0, 40), links(in.to, 18, 18, 0, 4040)};  // ECC, fast
  in.gpus[2].slow = {links(in.from, 18, 18, 0, 70), links(in.to, 18, 18, 0, 70)};    // static
  // The background of a healthy H100 link: 96 corrected per minute, no finding.
  in.gpus[3].slow = {links(in.from, 18, 18, 0, 377), links(in.to, 18, 18, 0, 473)};
  const auto f = run(in, "nvlink_errors");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].gpus, (std::vector<unsigned>{0}));  // warnings sort first
  EXPECT_EQ(f[0].severity, Severity::warning);
  EXPECT_NE(f[0].summary.find("link 0 replay +60 (60.0/min)"), std::string::npos) << f[0].summary;
  EXPECT_EQ(f[1].gpus, (std::vector<unsigned>{1}));
  EXPECT_EQ(f[1].severity, Severity::info);
  // A single look (status) has no window to grow in.
  in.to = in.from;
  EXPECT_TRUE(run(in, "nvlink_errors").empty());
}

TEST(rules_nvlink_test, links_down_count_only_where_links_or_peers_are_up) {
  Input in;
  in.to = in.from + 20s;
  in.gpus = {gpu(0), gpu(1)};
  // Two PCIe cards without bridges: every link inactive on both.
  in.gpus[0].slow = {links(in.to, 18, 0)};
  in.gpus[1].slow = {links(in.to, 18, 0)};
  EXPECT_TRUE(run(in, "nvlink_down").empty());
  // GPU 1's links come up: GPU 0's being down is now a fault.
  in.gpus[1].slow = {links(in.to, 18, 18)};
  const auto f = run(in, "nvlink_down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, (std::vector<unsigned>{0}));
  EXPECT_NE(f[0].summary.find("0 of 18 links up, its peers have 18"), std::string::npos)
      << f[0].summary;
}

}  // namespace
}  // namespace gpuclk::rules
