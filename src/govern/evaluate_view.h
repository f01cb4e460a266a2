// `gpuclk govern --evaluate`'s results as output: a tree for JSON (with --phases each policy's
// phases), one row per scenario and policy, and --phases' table of each policy's phases against
// none's.
#pragma once

#include <vector>

#include "govern/evaluate.h"
#include "output/value.h"

namespace gpuclk::govern {

// --format json: every scenario's results (and with `phases` each policy's phases).
output::Node evaluation_tree(const std::vector<ScenarioResult>& results, bool phases);

// One row per scenario and policy: energy, time, saved, slowdown, the gap to the oracle.
output::Table evaluation_table(const std::vector<ScenarioResult>& results);

// --phases: where each policy spends the energy, against none's energy in the same phase.
output::Table phase_table(const std::vector<ScenarioResult>& results);

}  // namespace gpuclk::govern
