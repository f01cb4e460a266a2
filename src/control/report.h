// What a change or a restore did, per GPU and setting: before, target, what the GPU reads
// afterwards, and the result. Commands print it; tests assert on it.
#pragma once

#include <string>
#include <vector>

#include "control/settings.h"
#include "util/error.h"

namespace gpuclk::control {

enum class Outcome {
  unchanged,        // already as asked: nothing written
  would_change,     // dry run
  changed,          // written (and read back where NVML can)
  failed,           // the write failed
  not_attempted,    // an earlier write failed first, or the run was interrupted
  rolled_back,      // written, then undone because another write failed
  rollback_failed,  // written, and the undo failed: still in the changed state
};

std::string_view to_string(Outcome o);

struct SettingReport {
  unsigned gpu = 0;
  std::string uuid;
  Setting setting = Setting::persistence_mode;
  std::string before;  // describe() of the state before; "unknown" for locks never recorded
  std::string target;
  std::string read_back;  // after the write; for locks, the live clock ("SM 1755 MHz now")
  Outcome outcome = Outcome::unchanged;
  std::string error;  // for failed / rollback_failed
};

struct ChangeReport {
  std::vector<SettingReport> settings;
  std::vector<std::string> notes;  // snapping, read-back mismatches, rollbacks
  ExitCode exit = ExitCode::ok;
  std::string error;  // when exit != ok: what happened, per GPU
  std::string hint;

  std::size_t count(Outcome o) const;
  bool any_change() const { return count(Outcome::changed) > 0; }
  // `more`'s settings and notes after these; the first failure (exit, error, hint) kept.
  void append(const ChangeReport& more);
};

}  // namespace gpuclk::control
