// What gpuclk applied to each GPU, as views show it, and which GPUs differ from the rest: a
// multi-GPU job runs at the pace of its slowest GPU, so settings should match across GPUs of
// one model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "control/journal.h"
#include "control/settings.h"

namespace gpuclk::control {

// "GPU lock 1500 MHz, power 600 W": the settings gpuclk applied (from its journal entry);
// "(interrupted)" marks a write a crash left unfinished. Empty when nothing is applied.
std::string applied_summary(const JournalEntry& entry);

struct GpuSettingsView {
  unsigned index = 0;
  std::string uuid;
  std::string model;  // GPUs are compared with others of the same model only
  Settings settings;  // what is known (NVML reads, clock locks from the journal)
};

// Clock locks as far as the journal knows: what gpuclk applied; unlocked for a GPU gpuclk never
// locked; absent while a write to it was interrupted.
void add_journal_locks(Settings& settings, const Journal& journal, const std::string& uuid);

struct Difference {
  Setting setting = Setting::persistence_mode;
  std::string value;     // this GPU's
  std::string majority;  // the other GPUs' (of the same model)
};

// For each GPU (by UUID) the settings in which it differs from the majority of its model.
std::map<std::string, std::vector<Difference>> settings_that_differ(
    const std::vector<GpuSettingsView>& gpus);

}  // namespace gpuclk::control
