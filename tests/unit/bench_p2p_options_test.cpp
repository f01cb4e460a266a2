// bench p2p's option checks and --numa parsing: refused with exit 2 before any GPU work.
#include <gtest/gtest.h>

#include "bench/p2p.h"
#include "util/error.h"

namespace gpuclk::bench::p2p {
namespace {

ExitCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

TEST(bench_p2p_options_test, defaults_are_nvbandwidths_and_valid) {
  const Options o;
  EXPECT_EQ(o.bytes, std::size_t(512) << 20);
  EXPECT_EQ(o.copies_per_sample, 16);
  EXPECT_EQ(o.warmup_copies, 4);
  EXPECT_EQ(o.latency_bytes, std::size_t(2) << 20);
  EXPECT_EQ(code_of([&] { validate(o); }), ExitCode::ok);
}

TEST(bench_p2p_options_test, out_of_range_options_are_bad_arguments) {
  auto with = [](auto change) {
    Options o;
    change(o);
    return code_of([&] { validate(o); });
  };
  EXPECT_EQ(with([](Options& o) { o.bytes = 4096; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.bytes = (std::size_t(1) << 20) + 8; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.copies_per_sample = 0; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.copies_per_sample = 1001; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.samples = 0; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.warmup_copies = -1; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.latency_bytes = 1000; }), ExitCode::bad_argument);
  EXPECT_EQ(with([](Options& o) { o.latency_accesses = 10; }), ExitCode::bad_argument);
}

TEST(bench_p2p_options_test, numa_request_lists_sorted_unique_nodes) {
  EXPECT_TRUE(parse_numa_request("all").all);
  const NumaRequest r = parse_numa_request("3,1,1");
  EXPECT_FALSE(r.all);
  EXPECT_EQ(r.nodes, (std::vector<int>{1, 3}));
}

TEST(bench_p2p_options_test, numa_request_refuses_what_is_not_a_node) {
  for (const char* bad : {"", ",", "-1", "x", "1.5", "0,two", "5000"}) {
    EXPECT_EQ(code_of([&] { (void)parse_numa_request(bad); }), ExitCode::bad_argument) << bad;
  }
}

TEST(bench_p2p_options_test, every_figure_names_its_nvbandwidth_test) {
  for (const FigureInfo& f : all_figures()) {
    EXPECT_EQ(&info(f.figure), &f);
    EXPECT_FALSE(f.nvbandwidth_test.empty()) << f.key;
  }
  EXPECT_EQ(info(Figure::ce_bidirectional).nvbandwidth_test,
            "device_to_device_bidirectional_memcpy_read_ce");
  EXPECT_EQ(info(Figure::host_to_device).nvbandwidth_test, "host_to_device_memcpy_ce");
  EXPECT_TRUE(info(Figure::latency).latency);
  EXPECT_FALSE(info(Figure::device_to_host).peer);
}

}  // namespace
}  // namespace gpuclk::bench::p2p
