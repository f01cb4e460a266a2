// The bench report as the output layer's tree (table, CSV and JSON printers all print it), and
// the display units it uses. The JSON form is also the file `--json FILE` writes and
// `gpuclk bench compare` reads back (compare.h): keys here are that file's format.
#pragma once

#include <string>
#include <vector>

#include "bench/environment.h"
#include "bench/report.h"
#include "output/value.h"
#include "util/error.h"

namespace gpuclk::bench {

// How a rate unit is shown: TFLOP/s, GFLOP/s per W and J per TFLOP for arithmetic; GB/s,
// GB/s per W and J per TB for memory traffic. value_shown = value_in_base_unit × scale.
struct DisplayUnits {
  std::string rate;      // "TFLOP/s"
  double rate_scale;     // 1e-12
  std::string per_watt;  // "GFLOP/s/W"
  double per_watt_scale;
  std::string energy_per_unit;  // "J/TFLOP"
  double energy_per_unit_scale;
  int rate_precision;
};
DisplayUnits display_units(RateUnit unit);
// The unit whose display rate unit is `rate` ("TFLOP/s", "GB/s"); nullopt otherwise.
std::optional<RateUnit> rate_unit_from_display(std::string_view rate);

// A workload that could not run on a GPU (the others' reports are kept).
struct RunError {
  unsigned gpu_index = 0;
  std::string workload, variant;
  ExitCode code = ExitCode::other;
  std::string message, hint;
};

// Everything one `gpuclk bench` invocation produced.
struct BenchRun {
  Environment environment;
  double seconds = 0, warmup_seconds = 0;  // per workload, as asked
  bool concurrent = false;
  double sample_interval_ms = 0;
  std::vector<WorkloadReport> reports;
  std::vector<AcrossGpus> across_gpus;
  std::vector<RunError> errors;
};

struct ViewOptions {
  bool repetitions = false;  // each repetition's rate (JSON files)
  bool details = false;      // the workload's details (cuBLASLt algorithm, grid, …)
};

output::Node result_node(const WorkloadReport& report, const ViewOptions& options);
output::Node bench_tree(const BenchRun& run, const ViewOptions& options);

// Format marker written at the top of every report file.
inline constexpr const char* kReportFormat = "gpuclk-bench-report-1";

}  // namespace gpuclk::bench
