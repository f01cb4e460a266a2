// bench nccl's plan from its options (bench/nccl_setup.h): the defaults, a bad option named
// (exit 2), and the sizes fitted to the GPUs' free memory — an explicit range that does not fit
// is an error, the default range is cut with a note.
#include <gtest/gtest.h>

#include "bench/nccl_setup.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {
namespace {

std::string plan_error(const PlanOptions& o) {
  try {
    (void)make_plan(o, false);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    return e.what();
  }
  return "no error";
}

TEST(bench_nccl_setup_test, the_default_plan_is_nccl_tests_defaults) {
  const Plan p = make_plan(PlanOptions{}, false);
  EXPECT_EQ(p.run.operations, benchmark_operations());
  ASSERT_FALSE(p.run.sizes.empty());
  EXPECT_EQ(p.run.sizes.front(), 8u);
  EXPECT_EQ(p.run.sizes.back(), std::size_t(8) << 30);
  EXPECT_EQ(p.run.iterations, 20);
  EXPECT_EQ(p.run.warmup_iterations, 1);
  EXPECT_TRUE(p.run.check);
  EXPECT_EQ(p.run.pair_bytes, std::size_t(1) << 30);
  EXPECT_EQ(p.interval, std::chrono::milliseconds(100));
  EXPECT_FALSE(p.sizes_given);
}

TEST(bench_nccl_setup_test, options_out_of_range_are_named) {
  PlanOptions o;
  o.iterations = 0;
  EXPECT_EQ(plan_error(o), "--iters 0 is outside 1..100000");
  o = {};
  o.warmup = 1001;
  EXPECT_EQ(plan_error(o), "--warmup 1001 is outside 0..1000");
  o = {};
  o.interval = "fast";
  EXPECT_EQ(plan_error(o), "bad --interval fast");
  o = {};
  o.pair_size = "0";
  o.no_check = true;
  const Plan p = make_plan(o, true);
  EXPECT_EQ(p.run.pair_bytes, 0u);
  EXPECT_FALSE(p.run.check);
  EXPECT_TRUE(p.sizes_given);
}

TEST(bench_nccl_setup_test, the_default_range_is_cut_to_the_free_memory) {
  Plan p = make_plan(PlanOptions{}, false);
  constexpr std::size_t GiB = std::size_t(1) << 30;
  // 80 GiB boards: 4 GiB and 1 GiB stay for NCCL and the driver, half the rest a buffer.
  const std::vector<DeviceMemory> memory = {{70 * GiB, 80 * GiB}, {10 * GiB, 80 * GiB}};
  const std::size_t fits = largest_fitting_size(memory);
  ASSERT_LT(fits, std::size_t(8) << 30);
  const std::string note = fit_memory(p, memory, {3, 5});
  EXPECT_EQ(p.run.sizes.back(), fits);
  EXPECT_LE(p.run.pair_bytes, fits);
  EXPECT_EQ(note, "sizes stop at " + size_text(fits) +
                      " (of 8 GiB): what fits twice in GPU 5's free memory");
  // Room enough: no note, nothing cut.
  PlanOptions up_to_1m;
  up_to_1m.sizes = "8:1M";
  Plan small = make_plan(up_to_1m, false);
  EXPECT_EQ(fit_memory(small, memory, {3, 5}), "");
  EXPECT_EQ(small.run.sizes.back(), std::size_t(1) << 20);
}

TEST(bench_nccl_setup_test, explicit_sizes_that_do_not_fit_are_an_error) {
  PlanOptions o;
  o.sizes = "1M:8G";
  Plan p = make_plan(o, true);
  constexpr std::size_t GiB = std::size_t(1) << 30;
  const std::vector<DeviceMemory> memory = {{10 * GiB, 80 * GiB}};
  try {
    (void)fit_memory(p, memory, {2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("8 GiB needs two 8 GiB buffers on each GPU; GPU 2 has "
                                         "10240 MiB free"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuclk::bench::nccl
