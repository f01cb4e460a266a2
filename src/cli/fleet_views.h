// `gpuclk fleet`'s views shared by its fleet view (cmd_fleet.cpp) and its job view
// (cmd_fleet_job.cpp): the findings as JSON and as lines under a table.
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_rules.h"
#include "output/value.h"

namespace gpuclk::cli {

class Context;

// The findings as a list node (an array in JSON): rule, severity, instance, gpus, summary,
// evidence, fix; `job` for a straggler.
void add_fleet_findings(output::Node& root, const std::vector<fleet::FleetFinding>& findings);

// Problems (warning, critical) with their evidence and cause, then notes in two lines each.
void print_fleet_findings(std::ostream& out, const std::vector<fleet::FleetFinding>& findings);

// A job across nodes (`--job ID`, `--pod NAMESPACE/NAME` or `--pod UID`): its GPUs on every
// node, its totals, its straggler. Exit codes as the fleet view's; 6 when no node booked a GPU
// to it within the range.
struct FleetJobQuery {
  std::string prometheus, selector;
  long range_s = 3600;
  std::chrono::milliseconds timeout{10000};
  std::string job;
  bool pod = false;
  std::optional<double> at;  // --at: Unix seconds
};
int run_fleet_job(Context& ctx, const FleetJobQuery& q);

}  // namespace gpuclk::cli
