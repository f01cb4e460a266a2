// `gpuclk fleet`'s views over a fleet snapshot and its findings (the command prints them): every
// GPU of every node as a table, the nodes' table, the whole as a tree for JSON; --dmon's line per
// node and its status line; the findings as JSON and as lines under a table (shared with the
// job view, job_report.h).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "fleet/fleet_rules.h"
#include "fleet/snapshot.h"
#include "output/value.h"

namespace gpuclk::fleet {

// One row per GPU: its node, clocks, power, settings, temperature and the rules it broke.
output::Table gpu_table(const Snapshot& snap, const std::vector<FleetFinding>& findings);
// One row per node: up, GPUs, energy over the range.
output::Table node_table(const Snapshot& snap);
// The JSON report: the query, every GPU, every node, the findings.
output::Node fleet_tree(const Snapshot& snap, const std::vector<FleetFinding>& findings);

// --dmon's columns (a time column first when streamed) and one node's row (`time` empty on a
// terminal, where the status line says it).
std::vector<output::Column> node_line_columns(const std::vector<NodeLine>& nodes, bool with_time);
std::vector<output::Value> node_line_row(const NodeLine& n, const std::string& time);
// --dmon's status line on a terminal: the nodes' GPUs, power and findings summed, and the pace.
std::string node_lines_heading(const std::vector<NodeLine>& nodes, const std::string& time,
                               double interval_s);

// The findings as a list node (an array in JSON): rule, severity, instance, gpus, summary,
// evidence, fix; `job` for a straggler.
void add_findings(output::Node& root, const std::vector<FleetFinding>& findings);
// Problems (warning, critical) with their evidence and cause, then notes in two lines each.
void print_findings(std::ostream& out, const std::vector<FleetFinding>& findings);

}  // namespace gpuclk::fleet
