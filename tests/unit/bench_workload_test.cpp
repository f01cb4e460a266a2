#include <gtest/gtest.h>

#include <string>

#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench {
namespace {

ExitCode code_of(const WorkloadSpec& spec) {
  try {
    validate(spec);
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

TEST(bench_workload_test, names_and_descriptions) {
  EXPECT_EQ(workload_name(GemmSpec{}), "gemm");
  EXPECT_EQ(describe(GemmSpec{GemmDtype::tf32, 8192, 4096, 1024}), "tf32 8192x4096x1024");
  EXPECT_EQ(workload_name(MemSpec{}), "mem");
  EXPECT_EQ(describe(MemSpec{MemKind::triad, 1024}), "triad 1024 B");
  EXPECT_EQ(workload_name(FmaSpec{}), "fma");
  EXPECT_EQ(to_string(RateUnit::flop_per_second), "FLOP/s");
  EXPECT_EQ(to_string(RateUnit::byte_per_second), "B/s");
}

TEST(bench_workload_test, dtype_and_kind_names_round_trip) {
  for (GemmDtype d : kAllGemmDtypes) EXPECT_EQ(parse_gemm_dtype(to_string(d)), d);
  EXPECT_EQ(parse_gemm_dtype("e4m3"), GemmDtype::fp8);
  EXPECT_FALSE(parse_gemm_dtype("fp64"));
  for (MemKind k : {MemKind::copy, MemKind::copy_kernel, MemKind::triad}) {
    EXPECT_EQ(parse_mem_kind(to_string(k)), k);
  }
  EXPECT_FALSE(parse_mem_kind("scale"));
}

// Random by default, named in every report; other inputs are part of the variant, so bench
// compare never pairs a run on zeros with one on random data.
TEST(bench_workload_test, inputs_are_random_unless_asked_and_always_named) {
  for (InputKind k : {InputKind::random, InputKind::zeros, InputKind::constant})
    EXPECT_EQ(parse_input_kind(to_string(k)), k);
  EXPECT_FALSE(parse_input_kind("normal"));
  EXPECT_EQ(GemmSpec{}.input, InputKind::random);
  EXPECT_EQ(MemSpec{}.input, InputKind::random);
  EXPECT_EQ(describe_input(GemmSpec{}), "random uniform in [-1, 1)");
  EXPECT_EQ(describe_input(MemSpec{}), "random bits");
  EXPECT_EQ(describe_input(MemSpec{MemKind::triad}), "random uniform in [-1, 1)");
  EXPECT_EQ(describe_input(FmaSpec{}), "none (registers)");
  GemmSpec zeros;
  zeros.input = InputKind::zeros;
  EXPECT_EQ(describe(zeros), "bf16 8192x8192x8192, zeros");
  EXPECT_EQ(describe_input(zeros), "zeros");
  const MemSpec constant{MemKind::copy, 1024, InputKind::constant};
  EXPECT_EQ(describe(constant), "copy 1024 B, constant");
  EXPECT_EQ(describe_input(constant), "constant byte 0x55");
  zeros.input = InputKind::constant;
  EXPECT_EQ(describe_input(zeros), "constant 0.75");
}

TEST(bench_workload_test, defaults_are_valid) {
  EXPECT_EQ(code_of(GemmSpec{}), ExitCode::ok);
  EXPECT_EQ(code_of(MemSpec{}), ExitCode::ok);
  EXPECT_EQ(code_of(FmaSpec{}), ExitCode::ok);
  EXPECT_EQ(GemmSpec{}.m, 8192);
  EXPECT_GE(GemmSpec{}.workspace_bytes, std::size_t(32) << 20);  // at least PyTorch's
  EXPECT_EQ(MemSpec{}.bytes, std::size_t(1) << 30);
}

TEST(bench_workload_test, bad_sizes_are_bad_arguments) {
  EXPECT_EQ(code_of(GemmSpec{GemmDtype::bf16, 0, 8, 8}), ExitCode::bad_argument);
  EXPECT_EQ(code_of(GemmSpec{GemmDtype::fp8, 8192, 8192, 100}), ExitCode::bad_argument);
  EXPECT_EQ(code_of(GemmSpec{GemmDtype::bf16, 8192, 8192, 100}), ExitCode::ok);
  EXPECT_EQ(code_of(MemSpec{MemKind::copy, 1000}), ExitCode::bad_argument);
  EXPECT_EQ(code_of(MemSpec{MemKind::copy, 0}), ExitCode::bad_argument);
  EXPECT_EQ(code_of(FmaSpec{0}), ExitCode::bad_argument);
}

TEST(bench_workload_test, work_per_launch_conventions_are_documented_by_the_specs) {
  // 2·m·n·k FLOP for GEMM; copy counts read + written.
  const GemmSpec g{};
  EXPECT_DOUBLE_EQ(2.0 * double(g.m) * double(g.n) * double(g.k), 1099511627776.0);
}

TEST(bench_workload_test, build_without_cuda_says_how_to_enable_it) {
  if (built_with_cuda()) GTEST_SKIP() << "built with CUDA";
  try {
    run(GemmSpec{}, 0, RunOptions{});
    FAIL() << "run() returned without CUDA";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::not_supported);
    // The message says which setting left CUDA out; the hint how to get it.
    EXPECT_NE(std::string(e.what()).find("built without CUDA ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GPUCLK_WITH_CUDA="), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("-DGPUCLK_WITH_CUDA=ON"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("nvcc"), std::string::npos) << e.hint();
  }
  EXPECT_THROW(device_count(), Error);
}

}  // namespace
}  // namespace gpuclk::bench
