// What `gpuclk set`, `reset`, `restore` and `apply` share: where the journal is, the session a
// writing command holds (read-only check, journal lock, signals held, journal loaded), and how a
// change report is printed and turned into an exit code.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "control/journal_store.h"
#include "control/nvml_gpu_control.h"
#include "control/profile.h"
#include "control/report.h"
#include "control/request.h"
#include "control/signals.h"
#include "control/transaction.h"

namespace gpuclk::cli {

// The journal's directory: --state-dir, else GPUCLK_STATE_DIR, else under --sim a directory
// beside the simulator's state file (a simulated run never touches /var/lib/gpuclk), else
// /var/lib/gpuclk.
std::filesystem::path journal_dir(Context& ctx);

// The journal as it is now, for views (status, clocks, journal); nullopt when there is none or
// it cannot be read. Never takes the lock, never writes.
std::optional<control::Journal> peek_journal(Context& ctx);

class ControlSession {
 public:
  // Refuses in read-only mode (exit 4) unless `dry_run`; a real run takes the journal lock,
  // holds signals back and loads the journal (moving aside one left from an earlier boot).
  ControlSession(Context& ctx, std::string command, bool dry_run);

  control::Journal& journal() { return journal_; }
  const control::JournalStore& store() const { return store_; }
  control::PersistJournal persist();
  control::RunOptions options();
  bool dry_run() const { return dry_run_; }
  // One GpuControl per device; in a dry run they can read but refuse to write.
  std::vector<std::unique_ptr<control::GpuControl>> open(
      const std::vector<gpu::Device*>& devices) const;

  // Prints the report (table/csv/json), notes and a summary line; returns 0 or throws the
  // report's Error so main() prints it and exits with its code.
  int finish(const control::ChangeReport& report, const std::string& nothing_to_do);

 private:
  Context& ctx_;
  std::string command_;
  bool dry_run_;
  control::JournalStore store_;
  std::optional<control::WriteAccess> access_;
  std::optional<control::JournalStore::Lock> lock_;
  std::optional<control::SignalDeferral> signals_;
  control::Journal journal_;
};

// For a resident writer (`serve --govern`): the journal's lock is taken for one change at a
// time and the journal read anew under it, so `gpuclk set` or `restore` from a shell waits for
// one write at most, never for the service's lifetime. Signals are the caller's (the service
// waits for them on its main thread and stops its writers in order).
class ResidentSession {
 public:
  // Refuses in read-only mode (exit 4); moves aside a journal left from an earlier boot.
  ResidentSession(Context& ctx, std::string command);

  // Runs `change` under the lock with the journal as it is on disk; `persist` saves it.
  using Change =
      std::function<control::ChangeReport(control::Journal&, const control::PersistJournal&)>;
  control::ChangeReport with_journal(const Change& change);
  // The journal without the lock (nullopt: none or unreadable), for checks between writes.
  std::optional<control::Journal> peek() const { return store_.try_load(); }
  // No settle wait, no signal hook, no test pause: a governor writes between its decisions.
  control::RunOptions options() const;
  std::vector<std::unique_ptr<control::GpuControl>> open(
      const std::vector<gpu::Device*>& devices) const;

 private:
  Context& ctx_;
  std::string command_;
  control::WriteAccess access_;
  control::JournalStore store_;
};

// One GPU and what to change on it.
struct DeviceRequest {
  gpu::Device* device = nullptr;
  control::Request request;
};

// What a profile asks of each GPU it covers among the selected ones (-i narrows it), overrides
// merged; GPUs it asks nothing of are left out. `apply` and `serve --profile` share it.
std::vector<DeviceRequest> profile_requests(Context& ctx, const control::Profile& profile);

// Prints a change report (table/csv/json), notes and a summary line naming `journal_file`;
// returns 0 or throws the report's Error so main() prints it and exits with its code.
int print_change_report(Context& ctx, const control::ChangeReport& report,
                        const std::string& journal_file, const std::string& nothing_to_do,
                        bool dry_run);

// For a user who is not root: sends `request` (a `set` or `restore`, protocol.h) to a running
// `gpuclk serve` that takes delegated settings (its hello names a policy), with -i's GPUs, and
// prints what landed as a direct command does. nullopt: root, --direct, or no such service — do
// it directly. Throws the service's refusal with its exit code (4 policy, 2 bad value, …).
std::optional<int> run_delegated(Context& ctx, const nlohmann::json& request,
                                 const std::string& nothing_to_do, bool dry_run);

// Validates every request against its GPU (all problems before any write), then applies them
// as one transaction and prints the report. Returns 0 or throws Error.
int run_change(ControlSession& session, const std::vector<DeviceRequest>& requests, bool snap,
               const std::string& nothing_to_do);

}  // namespace gpuclk::cli
