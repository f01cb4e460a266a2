// Restore: every GPU the journal lists goes back to its original state (the settings before
// gpuclk's first change), setting by setting in reverse write order. Idempotent: a GPU whose
// settings are all back leaves the journal, saved after each GPU, so a restore that is itself
// interrupted is simply run again.
#pragma once

#include <string>
#include <vector>

#include "control/transaction.h"

namespace gpuclk::control {

// `gpus`: every GPU present (matched to journal entries by UUID). A journaled GPU that is not
// present stays in the journal and makes the exit code partial (16) or gpu_not_found (6).
// `only`: restore just these UUIDs (empty: every GPU in the journal).
ChangeReport restore(const std::vector<GpuControl*>& gpus, Journal& journal,
                     const PersistJournal& persist, const RunOptions& options,
                     const std::vector<std::string>& only = {});

}  // namespace gpuclk::control
