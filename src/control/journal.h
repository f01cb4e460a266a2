// The journal: what gpuclk changed on which GPU, and what each GPU was like before its first
// change, so that `gpuclk restore` can put it back, also after a crash. In memory here;
// journal_store.h reads and writes it (JSON, atomically, under a lock).
//
// Per GPU (by UUID): `original`, the settings before gpuclk's first change (locked clocks
// cannot be read through NVML, so their original is assumed unlocked and marked so); `touched`,
// every setting gpuclk may have changed (marked before the write); `applied`, what gpuclk's
// writes set; `pending`, what a command was writing when it stopped (a crash leaves it).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "control/gpu_control.h"
#include "control/settings.h"

namespace gpuclk::control {

struct JournalEntry {
  std::string uuid;
  unsigned index = 0;  // at the time of the change; GPUs are matched by UUID
  std::string name;
  std::string pci_bus_id;
  Settings original;
  std::set<Setting> assumed;  // original values gpuclk could not read (clock locks)
  std::set<Setting> touched;
  Settings applied;
  Settings pending;
  std::string first_change;  // ISO 8601 UTC
  std::string last_change;
};

struct HistoryRecord {
  std::string time;  // ISO 8601 UTC
  long pid = 0;
  std::string command;  // "set", "reset", "apply PROFILE", "restore", "rollback"
  unsigned gpu = 0;
  std::string uuid;
  std::string setting;  // key_of(Setting)
  std::string from, to;
  std::string outcome;  // "ok", or the error
};

struct Journal {
  static constexpr int kVersion = 1;
  static constexpr std::size_t kHistoryLimit = 500;

  std::string boot_id;  // /proc/sys/kernel/random/boot_id when written: settings die with a reboot
  std::vector<JournalEntry> gpus;
  std::vector<HistoryRecord> history;  // oldest first, the last kHistoryLimit

  JournalEntry* find(const std::string& uuid);
  const JournalEntry* find(const std::string& uuid) const;
  // The GPU's entry, created with `before` as its original state if it has none. Clock locks
  // that `before` lacks are recorded as unlocked and marked assumed.
  JournalEntry& entry_for(const GpuFacts& facts, const Settings& before, const std::string& now);
  void remove(const std::string& uuid);
  void add_history(HistoryRecord record);
  // No GPU has a change to undo.
  bool clean() const { return gpus.empty(); }
};

std::string to_json(const Journal& journal);
// Throws std::runtime_error naming what is wrong for text that is not a journal of this version.
Journal journal_from_json(const std::string& text);

// Settings as the journal writes them, also used by `gpuclk journal --format json`.
std::string settings_to_json(const Settings& s);
// Back from settings_to_json (the service sends a GPU's settings this way); throws
// std::exception for text that is not such settings.
Settings settings_from_json(const std::string& text);

// "2024-05-01T12:00:00Z".
std::string utc_now();

}  // namespace gpuclk::control
