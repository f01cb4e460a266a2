// Changes settings on several GPUs as one transaction, journal first:
//   1. read each GPU's current settings; skip what already matches (apply is idempotent);
//   2. record the original state and every setting about to be written in the journal, and
//      save it durably — before the first write to any GPU;
//   3. write, GPU by GPU, in kWriteOrder; between writes, stop if a signal asked to;
//   4. on a failed write, undo this run's writes in reverse order (WriteSequence); what could
//      not be undone stays in the journal for `gpuclk restore`, and the report says which GPU
//      is in which state (exit 16);
//   5. read back every GPU and save the journal with what was applied.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "control/gpu_control.h"
#include "control/journal.h"
#include "control/report.h"

namespace gpuclk::control {

struct GpuChange {
  GpuControl* gpu = nullptr;
  Settings target;  // from validate()
};

struct RunOptions {
  std::string command;  // recorded in the journal's history: "set", "reset", "apply FILE"
  bool dry_run = false;
  // Called after each successful GPU write with the number done so far (test hook).
  std::function<void(std::size_t writes)> after_write;
  // True when the run should stop before its next write (a signal arrived).
  std::function<bool()> interrupted;
  // Waits for written clocks to take effect before they are read back (a few ms on a GPU).
  std::function<void()> settle;
};

// Saves the journal durably; throws Error if it cannot (then nothing is written to a GPU).
using PersistJournal = std::function<void(const Journal&)>;

ChangeReport apply_changes(const std::vector<GpuChange>& changes, Journal& journal,
                           const PersistJournal& persist, const RunOptions& options);

// The settings a GPU has now as far as gpuclk can know: what NVML reads, plus the clock locks
// the journal says gpuclk applied (NVML cannot read locks back).
Settings known_settings(GpuControl& gpu, const Journal& journal);

// "SM 1755 MHz now" / "memory 2619 MHz now": the read-back shown for a clock lock.
std::string live_text(const LiveClocks& live, Setting s);

}  // namespace gpuclk::control
