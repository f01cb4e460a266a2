// bench p2p's report in the output layer's shapes: a tree for JSON, one row per figure for CSV,
// and for the table format a matrix per peer figure (GPU(row) to GPU(column), as gpuclk topo
// lays out pairs) plus a row per GPU and host NUMA node. Display units: GB/s (1e9 B/s) and ns.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "bench/p2p_report.h"
#include "output/printer.h"
#include "output/value.h"

namespace gpuclk::bench::p2p {

// Format marker at the top of the JSON report.
inline constexpr const char* kP2pReportFormat = "gpuclk-bench-p2p-1";

// The JSON report: parameters, GPUs with their links, peer pairs and host rows, each figure
// with its nvbandwidth test name (a script pairs them by it), value, peak and samples.
output::Node p2p_tree(const P2pReport& report);

// One row per figure (peer and host), for CSV.
output::Table p2p_rows(const P2pReport& report);

struct TitledTable {
  std::string title;
  output::Table table;
};
// For the table format: each peer figure's matrix, then the host rows (none when skipped).
std::vector<TitledTable> p2p_tables(const P2pReport& report);

// "GPU0 -> GPU1: …" and "GPU0, host node 1: …": every verdict, one line each.
std::vector<std::string> p2p_verdict_lines(const P2pReport& report);

// The table format on `os` (through `printer`, which writes to it): why the peer figures are
// missing, the matrices and host rows, the verdicts, the measurement's line.
void print_text(std::ostream& os, output::Printer& printer, const P2pReport& report);

// The progress line on a terminal: which figure, which GPUs, which sample.
std::string progress_text(Figure figure, int device, int peer, int sample, int samples);

// A figure's value as shown: "394.21" (GB/s) or "812.4" (ns); "N/A" when missing.
std::string figure_text(const FigureReport& figure);

}  // namespace gpuclk::bench::p2p
