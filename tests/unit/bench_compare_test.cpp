// bench compare: parsing report files, matching results of two runs, the B/A arithmetic, and
// what a file that is not a report gets.
#include <gtest/gtest.h>

#include <string>

#include "bench/compare.h"
#include "util/error.h"

namespace gpuclk::bench {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GPUCLK_SOURCE_DIR) + "/tests/cli/fixtures/" + name;
}

// A report with one result per (variant, index, uuid, rate).
struct Row {
  std::string variant;
  unsigned index;
  std::string uuid;
  double rate;
};
std::string report(const std::vector<Row>& rows) {
  std::string results;
  for (const Row& r : rows) {
    if (!results.empty()) results += ",";
    results += "{\"workload\":\"gemm\",\"variant\":\"" + r.variant +
               "\",\"unit\":\"TFLOP/s\","
               "\"gpu\":{\"index\":" +
               std::to_string(r.index) + ",\"uuid\":\"" + r.uuid +
               "\"},\"rate\":{\"median\":" + std::to_string(r.rate) + "}}";
  }
  return "{\"format\":\"gpuclk-bench-report-1\",\"results\":[" + results + "]}";
}

ExitCode error_code_of(const std::string& text) {
  try {
    parse_recorded_run(text, "x.json");
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

TEST(bench_compare_test, reads_the_committed_calibration_report) {
  const RecordedRun run = load_recorded_run(fixture("bench_h100_calibration.json"));
  EXPECT_EQ(run.host, "h100-calibration");
  EXPECT_EQ(run.driver_version, "580.159.04");
  ASSERT_EQ(run.results.size(), 4u);
  EXPECT_EQ(run.results[0].variant, "bf16 8192x8192x8192");
  EXPECT_DOUBLE_EQ(run.results[0].rate, 680.65);
  EXPECT_DOUBLE_EQ(*run.results[0].sm_clock_mhz, 1410);
  EXPECT_DOUBLE_EQ(*run.results[0].efficiency_pct, 63.6);
  EXPECT_DOUBLE_EQ(*run.results[0].efficiency_at_clock_pct, 89.3);
  EXPECT_EQ(run.results[3].unit, "GB/s");
}

TEST(bench_compare_test, ratios_of_two_machines_match_gpus_by_index) {
  const RecordedRun a = load_recorded_run(fixture("bench_h100_calibration.json"));
  const RecordedRun b = load_recorded_run(fixture("bench_h100_other.json"));
  const auto rows = compare_runs(a, b);
  ASSERT_EQ(rows.size(), 4u);  // A's four; B ran two of them
  EXPECT_EQ(rows[0].variant, "bf16 8192x8192x8192");
  ASSERT_TRUE(rows[0].ratio);
  EXPECT_NEAR(*rows[0].ratio, 1.05, 0.0001);  // 714.68 / 680.65
  EXPECT_FALSE(rows[1].b);                    // tf32 only in A
  EXPECT_FALSE(rows[1].ratio);
  EXPECT_EQ(rows[3].variant, "copy 1073741824 B");
  EXPECT_NEAR(*rows[3].ratio, 0.9, 0.0001);  // 2699.6 / 2999.5
}

TEST(bench_compare_test, the_same_machine_matches_gpus_by_uuid_before_index) {
  // B listed its GPUs in another order (-i 1,0): UUIDs pair them up correctly.
  const RecordedRun a =
      parse_recorded_run(report({{"bf16", 0, "GPU-a", 700}, {"bf16", 1, "GPU-b", 600}}), "a");
  const RecordedRun b =
      parse_recorded_run(report({{"bf16", 1, "GPU-b", 660}, {"bf16", 0, "GPU-a", 700}}), "b");
  const auto rows = compare_runs(a, b);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(*rows[0].ratio, 1.0, 1e-12);
  EXPECT_NEAR(*rows[1].ratio, 1.1, 1e-12);
}

TEST(bench_compare_test, results_only_in_b_come_last) {
  const RecordedRun a = parse_recorded_run(report({{"bf16", 0, "GPU-a", 700}}), "a");
  const RecordedRun b =
      parse_recorded_run(report({{"fp16", 0, "GPU-a", 710}, {"bf16", 0, "GPU-a", 350}}), "b");
  const auto rows = compare_runs(a, b);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(*rows[0].ratio, 0.5, 1e-12);
  EXPECT_EQ(rows[1].variant, "fp16");
  EXPECT_FALSE(rows[1].a);
  const output::Table t = comparison_table(rows);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_TRUE(t.rows[1][5].missing());  // rate A
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][7].content), 0.5);
}

TEST(bench_compare_test, files_that_are_not_reports_are_bad_arguments) {
  EXPECT_EQ(error_code_of("{ not json"), ExitCode::bad_argument);
  EXPECT_EQ(error_code_of("[]"), ExitCode::bad_argument);
  EXPECT_EQ(error_code_of("{\"results\": []}"), ExitCode::bad_argument);  // no format marker
  EXPECT_EQ(
      error_code_of("{\"format\":\"gpuclk-bench-report-1\",\"results\":[{\"workload\":\"gemm\"}]}"),
      ExitCode::bad_argument);
  try {
    parse_recorded_run(
        "{\"format\":\"gpuclk-bench-report-1\",\"results\":[{\"workload\":\"gemm\","
        "\"unit\":\"TFLOP/s\",\"gpu\":{\"index\":0}}]}",
        "b.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "b.json: results[0] has no rate.median");
  }
  EXPECT_EQ(error_code_of(report({{"bf16", 0, "GPU-a", 1}})), ExitCode::ok);
}

TEST(bench_compare_test, an_unreadable_file_is_named) {
  try {
    load_recorded_run("/nonexistent/a.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_STREQ(e.what(),
                 "cannot read bench report '/nonexistent/a.json': No such file or directory");
  }
}

}  // namespace
}  // namespace gpuclk::bench
