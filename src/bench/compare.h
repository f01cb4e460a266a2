// `gpuclk bench compare A.json B.json`: two bench reports (report_view.h's JSON, as --json
// writes it) side by side per workload and GPU: rate, B/A ratio, clocks, power, efficiency and
// energy per unit of work. Two runs on one machine match GPUs by UUID; two machines by index.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/value.h"

namespace gpuclk::bench {

// One result of a recorded report, in display units (report_view.h).
struct RecordedResult {
  std::string workload, variant;
  unsigned gpu_index = 0;
  std::string gpu_uuid, gpu_name;
  std::string unit;  // "TFLOP/s" or "GB/s"
  double rate = 0;   // median, in `unit`
  std::optional<double> sm_clock_mhz, memory_clock_mhz, power_w;
  std::optional<double> efficiency_pct;           // at max clock
  std::optional<double> efficiency_at_clock_pct;  // at the median clock
  std::optional<double> energy_per_unit;          // J/TFLOP or J/TB
  std::string verdict;
};

struct RecordedRun {
  std::string name;  // the file it came from
  std::string host, started_at, gpuclk_version, driver_version;
  std::vector<RecordedResult> results;
};

// Parses a report file's text. Throws Error(bad_argument) naming `name` and what is wrong when
// the text is not JSON or not a bench report.
RecordedRun parse_recorded_run(std::string_view json_text, const std::string& name);
// Reads and parses `path`; Error(bad_argument) when it cannot be read.
RecordedRun load_recorded_run(const std::string& path);

struct ComparisonRow {
  std::string workload, variant, unit;
  std::optional<RecordedResult> a, b;  // one is missing when only one run has the result
  std::optional<double> ratio;         // b.rate / a.rate
};

// Rows in A's order, then results only B has. A result of B matches one of A with the same
// workload and variant on the GPU with the same UUID, else on the GPU with the same index.
std::vector<ComparisonRow> compare_runs(const RecordedRun& a, const RecordedRun& b);

// Rates in each row's unit; ratio = B/A; "Eff." is the efficiency at the max clock.
output::Table comparison_table(const std::vector<ComparisonRow>& rows);

}  // namespace gpuclk::bench
