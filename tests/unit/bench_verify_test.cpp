#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "bench/random.h"
#include "bench/verify.h"

namespace gpuclk::bench {
namespace {

// A k = 8192 dot product of uniform [-1, 1) inputs has scale ≈ √(k/9) ≈ 30.
constexpr double kScale = 30.0;

TEST(bench_verify_test, exact_result_passes_for_every_dtype) {
  for (GemmDtype d : kAllGemmDtypes) {
    const std::vector<GemmSample> samples = {{12.5, 12.5, kScale}, {-3.0, -3.0, kScale}};
    const Verification v = verify_gemm(d, 8192, samples);
    EXPECT_TRUE(v.checked);
    EXPECT_TRUE(v.passed) << to_string(d);
    EXPECT_EQ(v.samples, 2u);
    EXPECT_EQ(v.failures, 0u);
    EXPECT_DOUBLE_EQ(v.max_error, 0);
  }
}

TEST(bench_verify_test, output_rounding_is_allowed_relative_to_the_value) {
  // bf16 keeps 8 significant bits: 100 may come back as 100.5 (one ulp at 100 is 0.5).
  const std::vector<GemmSample> samples = {{100.5, 100.0, kScale}};
  const Verification v = verify_gemm(GemmDtype::bf16, 8192, samples);
  EXPECT_TRUE(v.passed);
  // Most of that element's allowance is its output rounding (2·2^-8·100 ≈ 0.78), which `bound`
  // leaves out: the error is 0.017 of the scale against a bound of 0.0002, yet it passes, and
  // worst_of_allowed says how close it came (0.5 of ~0.79).
  EXPECT_GT(v.max_error, v.bound);
  EXPECT_GT(v.worst_of_allowed, 0.5);
  EXPECT_LT(v.worst_of_allowed, 1.0);
  // The same error is far too much for fp32 output.
  EXPECT_FALSE(verify_gemm(GemmDtype::fp32, 8192, samples).passed);
}

TEST(bench_verify_test, tf32_allows_input_rounding_that_fp32_does_not) {
  const std::vector<GemmSample> samples = {{10.0 + 0.03, 10.0, kScale}};  // 1e-3 of scale
  EXPECT_TRUE(verify_gemm(GemmDtype::tf32, 8192, samples).passed);
  EXPECT_FALSE(verify_gemm(GemmDtype::fp32, 8192, samples).passed);
}

TEST(bench_verify_test, a_wrong_element_fails_every_dtype) {
  // An element of another row: off by about the scale.
  for (GemmDtype d : kAllGemmDtypes) {
    const std::vector<GemmSample> samples = {{1.0, 1.0, kScale}, {21.0, -17.0, kScale}};
    const Verification v = verify_gemm(d, 8192, samples);
    EXPECT_FALSE(v.passed) << to_string(d);
    EXPECT_EQ(v.failures, 1u);
    EXPECT_NEAR(v.max_error, 38.0 / kScale, 1e-12);
  }
}

TEST(bench_verify_test, nan_and_inf_outputs_fail) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<GemmSample> samples = {{nan, 1.0, kScale}, {inf, 1.0, kScale}};
  const Verification v = verify_gemm(GemmDtype::fp16, 8192, samples);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failures, 2u);
}

TEST(bench_verify_test, no_samples_is_not_a_pass) {
  EXPECT_FALSE(verify_gemm(GemmDtype::bf16, 8192, {}).passed);
}

TEST(bench_verify_test, accumulation_bound_grows_with_the_square_root_of_k) {
  const double small = gemm_tolerance(GemmDtype::fp32, 64).accumulation;
  const double large = gemm_tolerance(GemmDtype::fp32, 64 * 100).accumulation;
  EXPECT_NEAR(large / small, 10.0, 1e-12);
  // Well below the ~1.4·scale error of a wrong element, for every dtype at 8192.
  for (GemmDtype d : kAllGemmDtypes) {
    const GemmTolerance t = gemm_tolerance(d, 8192);
    EXPECT_LT(t.input_rounding + t.accumulation, 0.05) << to_string(d);
  }
}

TEST(bench_verify_test, exact_check_counts_mismatches) {
  EXPECT_TRUE(verify_exact(1000, 0, "copy").passed);
  const Verification v = verify_exact(1000, 3, "copy");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failures, 3u);
  EXPECT_EQ(v.method, "copy");
}

TEST(bench_verify_test, sample_positions_start_with_the_corners_and_stay_inside) {
  const auto positions = gemm_sample_positions(100, 7, 64, 42);
  ASSERT_EQ(positions.size(), 64u);
  EXPECT_EQ(positions[0], (MatrixPosition{0, 0}));
  EXPECT_EQ(positions[1], (MatrixPosition{99, 0}));
  EXPECT_EQ(positions[2], (MatrixPosition{0, 6}));
  EXPECT_EQ(positions[3], (MatrixPosition{99, 6}));
  std::set<std::pair<std::int64_t, std::int64_t>> distinct;
  for (const auto& p : positions) {
    EXPECT_GE(p.row, 0);
    EXPECT_LT(p.row, 100);
    EXPECT_GE(p.col, 0);
    EXPECT_LT(p.col, 7);
    distinct.insert({p.row, p.col});
  }
  EXPECT_GT(distinct.size(), 40u);
  EXPECT_EQ(gemm_sample_positions(100, 7, 64, 42), positions);  // deterministic
}

TEST(bench_verify_test, random_inputs_are_in_range_and_never_all_zero) {
  int zeros = 0;
  double sum = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float x = random_signed_unit(7, i);
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    zeros += x == 0.0f;
    sum += x;
  }
  EXPECT_LT(zeros, 5);
  EXPECT_NEAR(sum / 100000, 0.0, 0.01);
}

}  // namespace
}  // namespace gpuclk::bench
