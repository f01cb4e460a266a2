// bench nccl's views (bench/nccl_view.h): the JSON tree a script reads (format, per operation
// nccl-tests' figures by size), the CSV rows, the tables.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/nccl_view.h"
#include "output/printer.h"

namespace gpuclk::bench::nccl {
namespace {

const output::Node* child(const output::Node& n, const std::string& key) {
  for (const auto& c : n.children)
    if (c.key == key) return &c;
  return nullptr;
}
const output::Node* child(const output::Node* n, const std::string& key) {
  return n ? child(*n, key) : nullptr;
}

NcclReport two_gpu_report() {
  RunResult run;
  run.ordinals = {0, 1};
  run.peer_access = {{true, true}, {true, true}};
  run.native_all_to_all = true;
  for (Operation op : {Operation::all_reduce, Operation::send_recv}) {
    OperationResult o;
    o.operation = op;
    for (std::size_t bytes : {std::size_t(8), std::size_t(1) << 30}) {
      SizeResult s;
      s.counts = counts(op, bytes, 2);
      s.out_of_place.seconds = bytes == 8 ? 15e-6 : 2.9e-3;
      s.out_of_place.bandwidth = bandwidth(op, s.counts, s.out_of_place.seconds, 2);
      s.out_of_place.wrong = 0;
      if (has_in_place(op)) s.in_place = s.out_of_place;
      o.sizes.push_back(s);
    }
    run.operations.push_back(o);
  }
  run.pairs = {{0, 1, 1 << 30, 2.8e-3, 383e9, 0}, {1, 0, 1 << 30, 2.8e-3, 384e9, 0}};
  Topology t;
  for (unsigned i = 0; i < 2; ++i) {
    p2p::GpuLinks g;
    g.index = i;
    g.cuda_ordinal = int(i);
    g.nvlinks = 18;
    g.pcie_idle = g.pcie_max = gpu::PcieLink{5, 16};
    t.gpus.push_back(g);
  }
  t.nvlink_pairs = {{0, 1, 18, 26.562e9}};
  RunOptions options;
  options.operations = {Operation::all_reduce, Operation::send_recv};
  options.sizes = {8, std::size_t(1) << 30};
  options.pair_bytes = 1 << 30;
  GpuTelemetry g0;
  g0.gpu = 0;
  g0.sm_clock_mhz = 1980;
  NcclReport r = make_report(run, options, t, {{"NCCL_ALGO", "Ring"}}, {{g0}, {}});
  r.library_path = "/usr/lib/x86_64-linux-gnu/libnccl.so.2";
  r.library_version = "2.27.3";
  return r;
}

TEST(bench_nccl_view_test, the_json_tree_has_each_size_with_nccl_tests_figures) {
  const NcclReport r = two_gpu_report();
  const output::Node tree = nccl_tree(r);
  ASSERT_NE(child(tree, "format"), nullptr);
  EXPECT_EQ(std::get<std::string>(child(tree, "format")->value.content), "gpuclk-bench-nccl-1");
  const output::Node* ops = child(tree, "operations");
  ASSERT_NE(ops, nullptr);
  ASSERT_EQ(ops->children.size(), 2u);
  const output::Node& all_reduce = ops->children[0];
  EXPECT_EQ(std::get<std::string>(child(all_reduce, "nccl_tests")->value.content),
            "all_reduce_perf");
  const output::Node* results = child(all_reduce, "results");
  ASSERT_EQ(results->children.size(), 2u);
  const output::Node& big = results->children[1];
  EXPECT_EQ(std::get<long long>(child(big, "size")->value.content), 1ll << 30);
  const output::Node* oop = child(big, "out_of_place");
  EXPECT_NEAR(std::get<double>(child(oop, "busbw_gb_per_s")->value.content),
              double(1 << 30) / 2.9e-3 * 1e-9, 1e-9);
  EXPECT_NEAR(std::get<double>(child(oop, "time_us")->value.content), 2900, 1e-6);
  EXPECT_NE(child(big, "in_place"), nullptr);
  // send/recv has no in-place figures.
  EXPECT_EQ(child(child(ops->children[1], "results")->children[1], "in_place"), nullptr);
  EXPECT_EQ(child(tree, "pairs")->children.size(), 2u);
  EXPECT_EQ(std::get<std::string>(child(tree, "worst_pair")->value.content), "0->1");
  EXPECT_EQ(child(child(tree, "nccl"), "settings")->children.size(), 1u);
  // The tree prints as JSON.
  std::ostringstream out;
  output::make_printer(output::Format{output::Format::Kind::json}, out)->print_tree(tree);
  EXPECT_NE(out.str().find("\"format\": \"gpuclk-bench-nccl-1\""), std::string::npos);
}

TEST(bench_nccl_view_test, csv_has_a_row_per_size_placement_and_pair) {
  const output::Table t = nccl_rows(two_gpu_report());
  // all-reduce: 2 sizes × 2 placements; send/recv: 2 sizes × 1; 2 pairs.
  EXPECT_EQ(t.rows.size(), 4u + 2u + 2u);
  EXPECT_EQ(t.columns.front().key, "operation");
  EXPECT_EQ(std::get<std::string>(t.rows.back()[0].content), "send_recv_pair");
}

TEST(bench_nccl_view_test, tables_are_the_operations_the_summary_pairs_and_telemetry) {
  const NcclReport r = two_gpu_report();
  const auto tables = nccl_tables(r);
  ASSERT_EQ(tables.size(), 5u);
  EXPECT_EQ(tables[0].title.rfind("all-reduce (float32, sum, root 0; as nccl-tests' "
                                  "all_reduce_perf)",
                                  0),
            0u);
  EXPECT_EQ(tables[0].table.rows.size(), 2u);
  EXPECT_EQ(tables[2].title.rfind("Bus bandwidth at the largest size", 0), 0u);
  EXPECT_EQ(tables[3].title.rfind("send/recv: GPU(row) sends 1 GiB", 0), 0u);
  EXPECT_EQ(std::get<std::string>(tables[3].table.rows[0][2].content), "383.00 / 478.12 (80%)");
  EXPECT_EQ(tables[4].table.rows.size(), 1u);  // GPU 0 during all-reduce
  EXPECT_NE(parameters_line(r).find("8 B to 1 GiB in 2 sizes"), std::string::npos);
  EXPECT_NE(parameters_line(r).find("NCCL 2.27.3 (/usr/lib/x86_64-linux-gnu/libnccl.so.2)"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuclk::bench::nccl
