// bench nccl's report in the output layer's shapes: a tree for JSON, one row per operation,
// size and placement (and per send/recv pair) for CSV, and for the table format nccl-tests'
// table per operation, a summary beside the peaks, the pair matrix and the telemetry.
// Display units: GB/s (1e9 B/s, as nccl-tests) and µs.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "bench/nccl_report.h"
#include "bench/p2p_view.h"
#include "output/printer.h"
#include "output/value.h"

namespace gpuclk::bench::nccl {

// Format marker at the top of the JSON report.
inline constexpr const char* kNcclReportFormat = "gpuclk-bench-nccl-1";

// The JSON report: parameters, the NCCL library, GPUs with their links, per operation its
// nccl-tests binary, peak and per size nccl-tests' figures (time_us, algbw and busbw in GB/s,
// wrong), the pairs, the telemetry, notes and verdicts. perf/bench_nccl_vs_nccl_tests.sh pairs
// it with nccl-tests' -J output by operation and size.
output::Node nccl_tree(const NcclReport& report);

// One row per operation, size and placement, then one per pair (CSV).
output::Table nccl_rows(const NcclReport& report);

// For the table format: per operation nccl-tests' columns; the summary (largest size against
// the peak, smallest size's latency); the send/recv pair matrix; the telemetry.
std::vector<p2p::TitledTable> nccl_tables(const NcclReport& report);

// The line under the tables: sizes, iterations, check, NCCL version and path.
std::string parameters_line(const NcclReport& report);

// The table format on `os` (through `printer`, which writes to it): the notes, nccl-tests'
// tables, the verdicts, the parameters line.
void print_text(std::ostream& os, output::Printer& printer, const NcclReport& report);

// The progress line on a terminal: which operation, which size (or which send/recv pair).
std::string progress_text(const Progress& p);

}  // namespace gpuclk::bench::nccl
