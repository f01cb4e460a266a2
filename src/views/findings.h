// Findings (src/rules) as output: the JSON/tree shape every command uses
// ({"rule", "severity", "gpus": [..], "summary", "evidence": {..}, "cause", "fix", "docs"}) and
// the lines a table view prints under its table (status, doctor, fleet).
#pragma once

#include <iosfwd>
#include <vector>

#include "output/value.h"
#include "rules/finding.h"

namespace gpuclk::views {

// A list node "findings" (an array in JSON, empty when there are none).
output::Node findings_node(const std::vector<rules::Finding>& findings);

// "warning: SUMMARY\n    -> FIX" per finding ("note:" for info, "CRITICAL:" for critical);
// with `details`, the evidence and cause lines too (doctor's table view).
void print_finding_lines(std::ostream& out, const std::vector<rules::Finding>& findings,
                         bool details);

}  // namespace gpuclk::views
