// Findings (src/rules) as output: the JSON/tree shape every command uses
// ({"rule", "severity", "gpus": [..], "summary", "evidence": {..}, "cause", "fix", "docs"}),
// the lines a table view prints under its table, and the facts commands add from the journal.
#pragma once

#include <iosfwd>
#include <vector>

#include "output/value.h"
#include "rules/finding.h"
#include "rules/input.h"

namespace gpuclk::cli {

class Context;

// A list node "findings" (an array in JSON, empty when there are none).
output::Node findings_node(const std::vector<rules::Finding>& findings);

// "warning: SUMMARY\n    -> FIX" per finding ("note:" for info, "CRITICAL:" for critical);
// with `details`, the evidence and cause lines too (doctor's table view).
void print_finding_lines(std::ostream& out, const std::vector<rules::Finding>& findings,
                         bool details);

// The clock locks gpuclk's journal knows (NVML cannot read locks) into each GPU's facts; nothing
// when the journal is absent or clean (no GPU was ever changed).
void add_journal_facts(Context& ctx, std::vector<rules::GpuWindow>& gpus);

}  // namespace gpuclk::cli
