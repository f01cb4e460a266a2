// bench nccl's arithmetic (bench/nccl_plan.h) against nccl-tests 2.19: its sizes (-b/-e/-f and
// parsesize), its element counts per operation (getCollByteCount) and its getBw.
#include <gtest/gtest.h>

#include "bench/nccl_plan.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {
namespace {

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    return std::string(e.what()) + " | " + e.hint();
  }
  return "no error";
}

TEST(bench_nccl_plan_test, sizes_read_as_nccl_tests_reads_them) {
  EXPECT_EQ(parse_size("8", "--sizes"), 8u);
  EXPECT_EQ(parse_size("64K", "--sizes"), 65536u);
  EXPECT_EQ(parse_size("1m", "--sizes"), 1u << 20);
  EXPECT_EQ(parse_size("8G", "--sizes"), std::size_t(8) << 30);
  EXPECT_EQ(parse_size("0.5G", "--sizes"), std::size_t(1) << 29);
  EXPECT_NE(error_of([] { parse_size("8X", "--sizes"); }).find("--sizes: '8X' is not a size"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_size("0", "--pair-size"); }).find("--pair-size: '0'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_size("", "--sizes"); }).find("not a size"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size("2T", "--sizes"); }).find("at most 1T"), std::string::npos);
}

TEST(bench_nccl_plan_test, a_range_steps_by_the_factor_up_to_its_end) {
  const SizeRange r = parse_sizes("8:8G");
  EXPECT_EQ(r.min, 8u);
  EXPECT_EQ(r.max, std::size_t(8) << 30);
  const auto steps = size_steps(r);
  ASSERT_EQ(steps.size(), 31u);  // 2^3 .. 2^33, as all_reduce_perf -b 8 -e 8G -f 2
  EXPECT_EQ(steps.front(), 8u);
  EXPECT_EQ(steps.back(), std::size_t(8) << 30);
  EXPECT_EQ(size_steps({1024, 1 << 20, 4}).size(), 6u);  // 1K 4K 16K 64K 256K 1M
  EXPECT_EQ(size_steps({1000, 5000, 4}), (std::vector<std::size_t>{1000, 4000}));
  EXPECT_EQ(size_steps(parse_sizes("1G")), (std::vector<std::size_t>{std::size_t(1) << 30}));
  EXPECT_NE(error_of([] { parse_sizes("1G:8"); }).find("smallest size is above the largest"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              size_steps({8, 64, 1});
            }).find("--factor 1 is outside 2..1024"),
            std::string::npos);
}

TEST(bench_nccl_plan_test, operations_by_key) {
  EXPECT_EQ(parse_operations("all"), benchmark_operations());
  EXPECT_EQ(benchmark_operations().size(), 6u);
  EXPECT_EQ(parse_operations("send_recv,all_reduce,send_recv"),
            (std::vector<Operation>{Operation::send_recv, Operation::all_reduce}));
  const std::string e = error_of([] { parse_operations("all_reduce,gather"); });
  EXPECT_NE(e.find("--ops: 'gather' is not an operation"), std::string::npos);
  EXPECT_NE(e.find("valid: all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, "
                   "send_recv"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_operations("reduce"); }).find("'reduce'"), std::string::npos);
}

TEST(bench_nccl_plan_test, counts_follow_nccl_tests_get_coll_byte_count) {
  // all_reduce_perf at 1 MiB on 8 ranks: count 262144 both ways; size column 1048576.
  Counts c = counts(Operation::all_reduce, 1 << 20, 8);
  EXPECT_EQ(c.param, 262144u);
  EXPECT_EQ(c.send, 262144u);
  EXPECT_EQ(c.recv, 262144u);
  EXPECT_EQ(c.bytes, 1u << 20);
  // all_gather_perf: each rank sends count/n (rounded to 16 bytes), receives n × that; in place
  // its part sits at rank × part.
  c = counts(Operation::all_gather, 1 << 20, 8);
  EXPECT_EQ(c.param, 32768u);
  EXPECT_EQ(c.send, 32768u);
  EXPECT_EQ(c.recv, 262144u);
  EXPECT_EQ(c.send_in_place_offset, 32768u);
  EXPECT_EQ(c.bytes, 1u << 20);
  // reduce_scatter_perf: the mirror image; its result lands at rank × part in place.
  c = counts(Operation::reduce_scatter, 1 << 20, 8);
  EXPECT_EQ(c.param, 32768u);
  EXPECT_EQ(c.send, 262144u);
  EXPECT_EQ(c.recv, 32768u);
  EXPECT_EQ(c.recv_in_place_offset, 32768u);
  // alltoall_perf: count/n per peer, n × that each way.
  c = counts(Operation::all_to_all, 1 << 20, 8);
  EXPECT_EQ(c.param, 32768u);
  EXPECT_EQ(c.send, 262144u);
  EXPECT_EQ(c.recv, 262144u);
  // The 16-byte rounding: 3 ranks of 100 floats: 33 each rounded down to 32.
  c = counts(Operation::all_gather, 400, 3);
  EXPECT_EQ(c.param, 32u);
  EXPECT_EQ(c.recv, 96u);
  EXPECT_EQ(c.bytes, 384u);
  // 8 bytes on 2 ranks: nothing left per rank, as nccl-tests prints size 0.
  EXPECT_EQ(counts(Operation::all_gather, 8, 2).bytes, 0u);
  EXPECT_EQ(counts(Operation::send_recv, 8, 2).param, 2u);
  EXPECT_EQ(counts(Operation::broadcast, 4096, 4).param, 1024u);
}

TEST(bench_nccl_plan_test, bandwidths_follow_nccl_tests_get_bw) {
  const double t = 1e-3;
  // All-reduce of 1 GB... in 1 ms on 8 ranks: algbw = S / t, busbw × 2(n-1)/n.
  Counts c = counts(Operation::all_reduce, 1 << 30, 8);
  Bandwidth b = bandwidth(Operation::all_reduce, c, t, 8);
  EXPECT_DOUBLE_EQ(b.algorithm, double(1 << 30) / t);
  EXPECT_DOUBLE_EQ(b.bus, b.algorithm * 14 / 8);
  // All-gather: S = param × n × 4 (the whole gathered buffer), busbw × (n-1)/n.
  c = counts(Operation::all_gather, 1 << 30, 8);
  b = bandwidth(Operation::all_gather, c, t, 8);
  EXPECT_DOUBLE_EQ(b.algorithm, double(c.param * 8 * 4) / t);
  EXPECT_DOUBLE_EQ(b.bus, b.algorithm * 7 / 8);
  c = counts(Operation::reduce_scatter, 1 << 30, 4);
  b = bandwidth(Operation::reduce_scatter, c, t, 4);
  EXPECT_DOUBLE_EQ(b.bus, double(c.param * 4 * 4) / t * 3 / 4);
  c = counts(Operation::all_to_all, 1 << 30, 4);
  b = bandwidth(Operation::all_to_all, c, t, 4);
  EXPECT_DOUBLE_EQ(b.algorithm, double(c.param * 4 * 4) / t);
  EXPECT_DOUBLE_EQ(b.bus, b.algorithm * 3 / 4);
  for (Operation op : {Operation::broadcast, Operation::send_recv}) {
    c = counts(op, 1 << 20, 4);
    b = bandwidth(op, c, t, 4);
    EXPECT_DOUBLE_EQ(b.algorithm, double(1 << 20) / t);
    EXPECT_DOUBLE_EQ(b.bus, b.algorithm);
  }
  // One rank: algbw is the local copy's, busbw 0 where the factor has n - 1.
  b = bandwidth(Operation::all_reduce, counts(Operation::all_reduce, 1 << 20, 1), t, 1);
  EXPECT_GT(b.algorithm, 0);
  EXPECT_EQ(b.bus, 0);
  EXPECT_EQ(bandwidth(Operation::all_reduce, c, 0, 4).bus, 0);
}

TEST(bench_nccl_plan_test, in_place_where_nccl_tests_checks_it) {
  EXPECT_TRUE(has_in_place(Operation::all_reduce));
  EXPECT_TRUE(has_in_place(Operation::all_gather));
  EXPECT_TRUE(has_in_place(Operation::reduce_scatter));
  EXPECT_TRUE(has_in_place(Operation::broadcast));
  EXPECT_FALSE(has_in_place(Operation::all_to_all));
  EXPECT_FALSE(has_in_place(Operation::send_recv));
}

TEST(bench_nccl_plan_test, memory_decides_the_largest_size) {
  constexpr std::size_t GiB = std::size_t(1) << 30;
  // An 80 GB H100 with 79 GiB free: 5 GiB kept (4 of the 1-per-16 GiB, 1 more), 37 GiB per
  // buffer, so 32 GiB, a power of two.
  EXPECT_EQ(largest_fitting_size({{79 * GiB, 80 * GiB}}), 32 * GiB);
  // The tightest GPU decides: 20 GiB free of 24: 2 + 1 kept, 8.5 per buffer: 8 GiB.
  EXPECT_EQ(largest_fitting_size({{79 * GiB, 80 * GiB}, {20 * GiB, 24 * GiB}}), 8 * GiB);
  EXPECT_EQ(largest_fitting_size({{GiB, 80 * GiB}}), 0u);
  EXPECT_EQ(buffer_bytes({8, 1 << 20}, 0), std::size_t(2) << 20);
  EXPECT_EQ(buffer_bytes({8, 1 << 20}, 1 << 30), std::size_t(2) << 30);
  EXPECT_EQ(size_text(8), "8 B");
  EXPECT_EQ(size_text(65536), "64 KiB");
  EXPECT_EQ(size_text(std::size_t(8) << 30), "8 GiB");
  EXPECT_EQ(size_text(1000), "1000 B");
}

}  // namespace
}  // namespace gpuclk::bench::nccl
