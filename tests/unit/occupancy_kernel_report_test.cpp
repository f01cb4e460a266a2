#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "occupancy/kernel_report.h"
#include "util/error.h"

namespace gpuclk::occupancy {
namespace {

std::vector<KernelResources> sample(const std::string& name) {
  std::ifstream file(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/occupancy_samples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return parse_cuobjdump_resource_usage(text.str());
}

TEST(occupancy_kernel_report_test, without_target_each_sass_runs_on_its_own_arch_at_its_best_size) {
  const KernelReports reports = report_kernels(sample("cuobjdump_two_archs.txt"), {});
  ASSERT_EQ(reports.kernels.size(), 6u);
  EXPECT_EQ(reports.kernels[0].display_name, "void spill<300>(float*)");
  EXPECT_EQ(reports.kernels[0].run_arch->name, "sm_80");
  EXPECT_TRUE(reports.kernels[0].best_block_size);
  EXPECT_TRUE(reports.notes.empty());
}

TEST(occupancy_kernel_report_test, target_picks_the_closest_sass_of_the_same_major) {
  KernelReportOptions options;
  options.target = parse_architecture("sm_86");
  const KernelReports on_ga10x = report_kernels(sample("cuobjdump_two_archs.txt"), options);
  ASSERT_EQ(on_ga10x.kernels.size(), 3u);
  EXPECT_EQ(on_ga10x.kernels[1].sass_arch->name, "sm_80");
  EXPECT_EQ(on_ga10x.kernels[1].run_arch->name, "sm_86");
  EXPECT_EQ(on_ga10x.kernels[1].kernel.registers_per_thread, 76);

  options.target = parse_architecture("sm_90");
  EXPECT_EQ(report_kernels(sample("cuobjdump_two_archs.txt"), options)
                .kernels[1]
                .kernel.registers_per_thread,
            78);
}

TEST(occupancy_kernel_report_test, target_without_runnable_sass_is_noted_not_guessed) {
  KernelReportOptions options;
  options.target = parse_architecture("sm_75");
  const KernelReports reports = report_kernels(sample("cuobjdump_two_archs.txt"), options);
  EXPECT_TRUE(reports.kernels.empty());
  ASSERT_EQ(reports.notes.size(), 3u);
  EXPECT_EQ(reports.notes[2],
            "add(float*, float const*, int): no SASS that runs on sm_75 (the "
            "driver would compile its PTX, if any, when loading it)");
}

TEST(occupancy_kernel_report_test, given_block_size_and_dynamic_shared_memory_are_used) {
  KernelReportOptions options;
  options.target = parse_architecture("sm_90");
  options.name_filter = std::string("tiled");
  options.threads_per_block = 256;
  const KernelReports reports = report_kernels(sample("cuobjdump_two_archs.txt"), options);
  ASSERT_EQ(reports.kernels.size(), 1u);
  const Occupancy& occupancy = reports.kernels[0].occupancy;
  EXPECT_EQ(occupancy.active_blocks, 3);  // 78 registers: 2560 per warp, 24 warps per SM
  EXPECT_EQ(occupancy.limiters, std::vector<Limiter>{Limiter::registers});
  options.dynamic_shared_bytes = 100 * 1024;
  EXPECT_EQ(
      report_kernels(sample("cuobjdump_two_archs.txt"), options).kernels[0].occupancy.active_blocks,
      2);
}

TEST(occupancy_kernel_report_test, launch_bounds_cap_the_best_block_size) {
  KernelReportOptions options;
  options.target = parse_architecture("sm_90");
  options.name_filter = std::string("tiled");
  EXPECT_EQ(report_kernels(sample("cuobjdump_two_archs.txt"), options)
                .kernels[0]
                .kernel.threads_per_block,
            768);
  options.launch_bounds_max_threads = 256;  // tiled is __launch_bounds__(256, 2)
  const KernelReport bounded =
      report_kernels(sample("cuobjdump_two_archs.txt"), options).kernels[0];
  EXPECT_EQ(bounded.kernel.threads_per_block, 256);
  EXPECT_EQ(bounded.occupancy.active_blocks, 3);
}

TEST(occupancy_kernel_report_test, filter_matches_demangled_names_too) {
  KernelReportOptions options;
  options.name_filter = std::string("spill<300>");
  EXPECT_EQ(report_kernels(sample("cuobjdump_two_archs.txt"), options).kernels.size(), 2u);
  options.name_filter = std::string("nothing");
  EXPECT_THROW(report_kernels(sample("cuobjdump_two_archs.txt"), options), Error);
}

TEST(occupancy_kernel_report_test, lone_cubin_needs_an_architecture) {
  EXPECT_THROW(report_kernels(sample("cuobjdump_cubin.txt"), {}), Error);
  KernelReportOptions options;
  options.target = parse_architecture("sm_90");
  const KernelReports reports = report_kernels(sample("cuobjdump_cubin.txt"), options);
  ASSERT_EQ(reports.kernels.size(), 2u);
  EXPECT_EQ(reports.kernels[0].sass_arch->name, "sm_90");
}

}  // namespace
}  // namespace gpuclk::occupancy
