// The facts the rules' commands (status, doctor, top) add from the journal before judging; the
// findings as output are views/findings.h.
#pragma once

#include <vector>

#include "rules/input.h"

namespace gpuclk::cli {

class Context;

// The clock locks gpuclk's journal knows (NVML cannot read locks) into each GPU's facts; nothing
// when the journal is absent or clean (no GPU was ever changed).
void add_journal_facts(Context& ctx, std::vector<rules::GpuWindow>& gpus);

}  // namespace gpuclk::cli
