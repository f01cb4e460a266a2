// bench p2p's views from a hand-built report: the matrix and host rows (table), one row per
// figure (CSV), the tree (JSON) with every figure's nvbandwidth test name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/p2p_view.h"
#include "output/printer.h"

namespace gpuclk::bench::p2p {
namespace {

Measured measured(Figure f, double value) {
  Measured m;
  m.figure = f;
  m.samples = {value};
  m.summary = summarize(m.samples);
  m.verified = true;
  return m;
}

GpuLinks gpu_links(unsigned index) {
  GpuLinks g;
  g.index = index;
  g.cuda_ordinal = int(index);
  g.name = "NVIDIA H200";
  g.pcie_idle = gpu::PcieLink{1, 16};
  g.pcie_loaded = gpu::PcieLink{5, 16};
  g.pcie_max = gpu::PcieLink{5, 16};
  g.numa_node = 0;
  g.nvlinks = 18;
  return g;
}

P2pReport two_gpus() {
  P2pReport r;
  r.gpus = {gpu_links(0), gpu_links(1)};
  const PairLinks nv18{0, 1, 18, 26.562e9};
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
    PeerResult p;
    p.device = a, p.peer = b, p.peer_access = true;
    p.figures = {
        measured(Figure::ce_read, 394.21e9),       measured(Figure::ce_write, 396e9),
        measured(Figure::ce_bidirectional, 779e9), measured(Figure::sm_read, 376e9),
        measured(Figure::sm_write, 380e9),         measured(Figure::sm_bidirectional, 750e9),
        measured(Figure::latency, 828.4e-9)};
    r.pairs.push_back(
        make_pair_report(p, r.gpus[std::size_t(a)], r.gpus[std::size_t(b)], &nv18, "NV18"));
  }
  for (unsigned g = 0; g < 2; ++g) {
    HostResult h;
    h.device = int(g);
    h.numa_node = 0;
    h.figures = {measured(Figure::host_to_device, 55e9), measured(Figure::device_to_host, 55.5e9),
                 measured(Figure::local_copy, 2100e9)};
    r.hosts.push_back(make_host_report(h, r.gpus[g], nullptr, 1));
  }
  return r;
}

std::string print(const output::Format& format, auto&& feed) {
  std::ostringstream out;
  feed(*output::make_printer(format, out));
  return out.str();
}

TEST(bench_p2p_view_test, matrices_show_value_peak_and_share_per_pair) {
  const auto tables = p2p_tables(two_gpus());
  ASSERT_EQ(tables.size(), 8u);  // 7 peer figures + host rows
  EXPECT_EQ(tables[0].title,
            "CE read: GPU(row) reads from GPU(column), GB/s measured / peak (share)");
  const auto& m = tables[0].table;
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(output::to_text(m.rows[0][1]), "X");
  EXPECT_EQ(output::to_text(m.rows[0][2]), "394.21 / 478.12 (82%)");
  EXPECT_EQ(output::to_text(tables[2].table.rows[1][1]), "779.00 / 956.23 (81%)");
  EXPECT_EQ(output::to_text(tables[6].table.rows[0][2]), "828.4");
  const auto& host = tables.back().table;
  ASSERT_EQ(host.rows.size(), 2u);
  EXPECT_EQ(output::to_text(host.rows[0][1]), "0 (local)");
  EXPECT_EQ(output::to_text(host.rows[0][2]), "55.00 / 63.01 (87%)");
  EXPECT_EQ(output::to_text(host.rows[0][4]), "2100.00");  // no link peak for a local copy
  EXPECT_EQ(output::to_text(host.rows[0][5]), "Gen5 x16 (max Gen5 x16)");
  EXPECT_EQ(output::to_text(host.rows[0][6]), "ok");
}

TEST(bench_p2p_view_test, csv_has_one_row_per_figure_with_its_nvbandwidth_test) {
  const P2pReport r = two_gpus();
  const output::Table rows = p2p_rows(r);
  EXPECT_EQ(rows.rows.size(), 2u * 7 + 2u * 3);
  const std::string csv = print(output::Format{output::Format::Kind::csv},
                                [&](output::Printer& p) { p.print_table(rows); });
  EXPECT_NE(csv.find("figure, nvbandwidth_test, gpu, peer, numa_node, value, unit, peak [GB/s]"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("ce_read, device_to_device_memcpy_read_ce, 0, 1, [N/A], 394.21, GB/s, 478.12"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("latency, device_to_device_latency_sm, 1, 0, [N/A], 828.4, ns"),
            std::string::npos);
}

TEST(bench_p2p_view_test, json_pairs_figures_with_nvbandwidth_tests) {
  const std::string text = print(output::Format{output::Format::Kind::json},
                                 [&](output::Printer& p) { p.print_tree(p2p_tree(two_gpus())); });
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], kP2pReportFormat);
  EXPECT_EQ(j["parameters"]["bytes_per_copy"], 512 << 20);
  ASSERT_EQ(j["peer"].size(), 2u);
  const auto& read = j["peer"][0]["figures"]["ce_read"];
  EXPECT_EQ(read["nvbandwidth_test"], "device_to_device_memcpy_read_ce");
  EXPECT_DOUBLE_EQ(read["value"].get<double>(), 394.21);
  EXPECT_EQ(read["unit"], "GB/s");
  EXPECT_DOUBLE_EQ(read["peak_gb_per_s"].get<double>(), 478.12);
  EXPECT_EQ(j["peer"][0]["figures"]["latency"]["unit"], "ns");
  EXPECT_TRUE(j["peer"][0]["verdicts"].is_array());
  EXPECT_EQ(j["host"][1]["figures"]["device_to_host"]["nvbandwidth_test"],
            "device_to_host_memcpy_ce");
  EXPECT_EQ(j["gpus"][0]["pcie_loaded"], "Gen5 x16");
  EXPECT_FALSE(j.contains("peer_skipped"));
}

TEST(bench_p2p_view_test, one_gpu_says_there_is_no_peer) {
  P2pReport r = two_gpus();
  r.pairs.clear();
  r.peer_skipped = "one GPU selected (GPU 0): there is no peer to measure, host figures only";
  EXPECT_EQ(p2p_tables(r).size(), 1u);  // host rows only
  const auto j =
      nlohmann::json::parse(print(output::Format{output::Format::Kind::json},
                                  [&](output::Printer& p) { p.print_tree(p2p_tree(r)); }));
  EXPECT_TRUE(j["peer"].empty());
  EXPECT_EQ(j["peer_skipped"], r.peer_skipped);
}

TEST(bench_p2p_view_test, verdict_lines_name_the_pair_or_the_node) {
  P2pReport r = two_gpus();
  r.pairs[0].verdicts = {"GPU 0 has 2 of its 18 NVLinks down: the peak counts the 16 up"};
  r.hosts[1].verdicts = {"wrong NUMA node"};
  const auto lines = p2p_verdict_lines(r);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "GPU0 -> GPU1: GPU 0 has 2 of its 18 NVLinks down: the peak counts the 16 up");
  EXPECT_EQ(lines[1], "GPU1, host node 0: wrong NUMA node");
}

}  // namespace
}  // namespace gpuclk::bench::p2p
