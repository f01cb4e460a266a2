// The sessions a writer holds on the journal. Every change to a GPU goes through one: the
// read-only check, the journal's lock, the journal loaded as it is on disk (one left from an
// earlier boot moved aside), and one GpuControl per GPU.
//   ControlSession   a command (`gpuclk set`, `reset`, `restore`, `apply`, `sweep`): the lock
//                    for its whole run, signals held back between a write and its journal entry;
//   ResidentSession  a writer inside the service (the governor, the profile keeper, delegated
//                    settings): the lock for one change at a time, so a `gpuclk set` from a
//                    shell waits for one write at most, never for the service's lifetime.
// Both take plain options (SessionOptions); the CLI fills them from its flags and environment.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/gpu_control.h"
#include "control/journal.h"
#include "control/journal_store.h"
#include "control/nvml_gpu_control.h"
#include "control/signals.h"
#include "control/transaction.h"
#include "gpu/device.h"

namespace gpuclk::control {

struct SessionOptions {
  std::filesystem::path journal_dir;
  std::string command;     // recorded in the journal's history: "set", "serve --govern phase"
  bool read_only = false;  // refuse to write (exit 4), naming read-only mode
  // Whether the node is simulated, asked only when the journal names another boot: a simulated
  // node's journal is never moved aside for that (the simulator's state outlives boots of this
  // machine). Empty: a real node.
  std::function<bool()> simulated;
  // Prefix of the lines printed while waiting for another writer's lock: "gpuclk", "gpuclk serve".
  std::string name = "gpuclk";
  // Test hook: called after each successful GPU write with the number done so far.
  std::function<void(std::size_t)> after_write;
  // Called once before the journal's lock is taken (the CLI's fuzz hook stops there).
  std::function<void(std::string_view what)> before_lock;
  // Asked while another gpuclk holds the journal's lock (JournalStore::GiveUp): the service
  // gives up the wait once it is asked to stop, so a writer that never finishes cannot keep it
  // from stopping. Empty: wait as long as it takes (a command in a shell: Ctrl-C ends it).
  JournalStore::GiveUp give_up;
};

// How long written clocks take to take effect before they are read back.
inline constexpr std::chrono::milliseconds kSettleTime{50};
// Waits kSettleTime: RunOptions::settle for a writer that reads back what it wrote.
void settle();

// Waits until no other gpuclk holds the journal's lock, printing who does, as a writer's session
// would before its first change; returns at once when none does. Throws LockWaitStopped when
// options.give_up ends the wait.
void wait_for_journal(const SessionOptions& options);

// The journal under `store`'s lock; one from an earlier boot (not on a simulated node) is moved
// aside with a line on stderr naming options.name, and an empty journal returned (a reboot reset
// those GPUs).
Journal load_current(const JournalStore& store, const SessionOptions& options);

class ControlSession {
 public:
  // Refuses in read-only mode (exit 4) unless `dry_run`; a real run takes the journal lock,
  // holds signals back and loads the journal (moving aside one left from an earlier boot).
  ControlSession(SessionOptions options, bool dry_run);

  Journal& journal() { return journal_; }
  const JournalStore& store() const { return store_; }
  PersistJournal persist();
  // The command, the test hook, the signal check and a settle wait after clock writes.
  RunOptions options() const;
  bool dry_run() const { return dry_run_; }
  const std::string& command() const { return options_.command; }
  // One GpuControl per device; in a dry run they can read but refuse to write.
  std::vector<std::unique_ptr<GpuControl>> open(const std::vector<gpu::Device*>& devices) const;

 private:
  SessionOptions options_;
  bool dry_run_;
  JournalStore store_;
  std::optional<WriteAccess> access_;
  std::optional<JournalStore::Lock> lock_;
  std::optional<SignalDeferral> signals_;
  Journal journal_;
};

class ResidentSession {
 public:
  // Refuses in read-only mode (exit 4); moves aside a journal left from an earlier boot.
  explicit ResidentSession(SessionOptions options);

  // Runs `change` under the lock with the journal as it is on disk; `persist` saves it.
  using Change = std::function<ChangeReport(Journal&, const PersistJournal&)>;
  ChangeReport with_journal(const Change& change);
  // The journal without the lock (nullopt: none or unreadable), for checks between writes.
  std::optional<Journal> peek() const { return store_.try_load(); }
  const JournalStore& store() const { return store_; }
  // No settle wait, no signal hook, no test pause: a governor writes between its decisions.
  RunOptions options() const;
  std::vector<std::unique_ptr<GpuControl>> open(const std::vector<gpu::Device*>& devices) const;

 private:
  SessionOptions options_;
  WriteAccess access_;
  JournalStore store_;
};

}  // namespace gpuclk::control
