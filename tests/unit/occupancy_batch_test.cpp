#include <gtest/gtest.h>

#include "occupancy/batch.h"
#include "util/error.h"

namespace gpuclk::occupancy {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_batch_csv(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::bad_argument);
    return error.what();
  }
  return "no error";
}

TEST(occupancy_batch_test, evaluates_every_row_and_keeps_extra_columns) {
  const Batch batch = parse_batch_csv(
      "name,arch,threads,regs,smem_static,smem_dynamic\n"
      "gemm,sm_90,256,32,0,0\n"
      "# a comment\n"
      "\n"
      "\"reduce, fused\",sm_80,1024,64,48K,0\n");
  ASSERT_EQ(batch.rows.size(), 2u);
  EXPECT_EQ(batch.columns.front(), "name");
  EXPECT_EQ(batch.rows[0].line, 2);
  EXPECT_EQ(batch.rows[0].occupancy.active_blocks, 8);
  EXPECT_EQ(join_limiters(batch.rows[0].occupancy), "warps+registers");
  EXPECT_EQ(batch.rows[1].cells[0], "reduce, fused");
  EXPECT_EQ(batch.rows[1].line, 5);
  EXPECT_EQ(batch.rows[1].kernel.static_shared_bytes, 48 * 1024);
  EXPECT_EQ(batch.rows[1].occupancy.active_blocks, 1);
}

TEST(occupancy_batch_test, optional_launch_bounds_and_carveout_columns) {
  const Batch batch = parse_batch_csv(
      "arch,threads,regs,smem_static,smem_dynamic,max_threads,carveout\n"
      "sm_90,256,32,0,32768,,25\n"
      "sm_90,512,32,0,0,256,\n");
  EXPECT_EQ(batch.rows[0].occupancy.active_blocks, 1);
  EXPECT_FALSE(batch.rows[0].kernel.launch_bounds_max_threads.has_value());
  EXPECT_FALSE(batch.rows[1].occupancy.valid());
  EXPECT_EQ(batch.rows[1].occupancy.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::block_above_launch_bounds});
}

TEST(occupancy_batch_test, columns_in_any_order_and_case) {
  const Batch batch =
      parse_batch_csv("REGS, Threads, arch, smem_dynamic, smem_static\n40, 256, 9.0, 0, 0\n");
  EXPECT_EQ(batch.rows[0].occupancy.active_blocks, 6);
}

TEST(occupancy_batch_test, bad_values_name_line_column_and_what_is_valid) {
  const std::string header = "arch,threads,regs,smem_static,smem_dynamic\n";
  EXPECT_EQ(error_of(header + "sm_90,256,abc,0,0\n"),
            "line 2, column regs: \"abc\" is not valid (use 0..255)");
  EXPECT_EQ(error_of(header + "sm_90,256,32,1M,0\n"),
            "line 2, column smem_static: \"1M\" is not valid (use bytes, or KiB with a K suffix)");
  EXPECT_TRUE(error_of(header + "sm_95,256,32,0,0\n")
                  .starts_with("line 2, column arch: \"sm_95\" is not valid (use sm_50, sm_52"));
  EXPECT_EQ(error_of(header + "sm_90,0,32,0,0\n"),
            "line 2: threads per block 0 is not a block size: use 1 or more");
  EXPECT_EQ(error_of(header + "sm_90,256,32\n"), "line 2 has 3 cells; the header has 5 columns");
  EXPECT_TRUE(error_of("arch,threads,regs\nsm_90,1,1\n")
                  .starts_with("batch header (line 1) has no column \"smem_static\""));
  EXPECT_TRUE(error_of("").starts_with("batch file is empty"));
}

TEST(occupancy_batch_test, parses_sizes_in_bytes_and_kib) {
  EXPECT_EQ(parse_bytes("49152"), 49152);
  EXPECT_EQ(parse_bytes("48K"), 49152);
  EXPECT_EQ(parse_bytes("48KiB"), 49152);
  EXPECT_EQ(parse_bytes("0"), 0);
  EXPECT_FALSE(parse_bytes("-1").has_value());
  EXPECT_FALSE(parse_bytes("48MB").has_value());
  EXPECT_FALSE(parse_bytes("").has_value());
}

}  // namespace
}  // namespace gpuclk::occupancy
