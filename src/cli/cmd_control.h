// What `gpuclk set`, `reset`, `restore` and `apply` share: where the journal is, the options of
// the session a writing command holds (control/session.h: read-only check, journal lock, signals
// held, journal loaded) from the global flags, and how a change report is printed and turned
// into an exit code.
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
#include "control/session.h"
#include "control/settings_writer.h"
#include "control/transaction.h"
#include "serve/messages.h"

namespace gpuclk::cli {

// The journal's directory: --state-dir, else GPUCLK_STATE_DIR, else under --sim a directory
// beside the simulator's state file (a simulated run never touches /var/lib/gpuclk), else
// /var/lib/gpuclk.
std::filesystem::path journal_dir(Context& ctx);

// The journal as it is now, for views (status, clocks, journal); nullopt when there is none or
// it cannot be read. Never takes the lock, never writes.
std::optional<control::Journal> peek_journal(Context& ctx);

// The options of a journal session for `command` from the global flags: the journal's directory,
// read-only mode, the simulated node, the crash-test hook and the fuzz hook. Unless `dry_run`,
// read-only mode is refused (exit 4) first, before NVML is loaded to find the directory.
control::SessionOptions session_options(Context& ctx, std::string command, bool dry_run = false);

// Prints a session's change report as print_change_report() does, naming its journal.
int finish(Context& ctx, const control::ControlSession& session,
           const control::ChangeReport& report, const std::string& nothing_to_do);

using control::DeviceRequest;

// control::profile_requests over the GPUs -i selects.
std::vector<DeviceRequest> profile_requests(Context& ctx, const control::Profile& profile);

// Prints a change report (table/csv/json), notes and a summary line naming `journal_file`;
// returns 0 or throws the report's Error so main() prints it and exits with its code.
int print_change_report(Context& ctx, const control::ChangeReport& report,
                        const std::string& journal_file, const std::string& nothing_to_do,
                        bool dry_run);

// The hello of a `gpuclk serve` that takes delegated settings (it names a policy), when this
// process is not root and --direct is not given; nullptr: write directly.
const serve::Hello* delegating_service(Context& ctx);

// The writer of `sweep` and `govern` (control/settings_writer.h) for `command`: delegated
// (serve/delegated_settings.h) when delegating_service() answers, else direct. A direct writer
// for a user who is not root fails as before (exit 4: NVML's or the journal's permission), its
// hint naming `gpuclk serve` with a policy. Throws Error (exit 4) in read-only mode.
std::unique_ptr<control::SettingsWriter> settings_writer(Context& ctx, const std::string& command,
                                                         control::WriterOptions options = {});

// For a user who is not root: sends `set` (a change; a `restore` where nullopt) to a running
// `gpuclk serve` that takes delegated settings (its hello names a policy), with -i's GPUs, and
// prints what landed as a direct command does. nullopt: root, --direct, or no such service — do
// it directly. Throws the service's refusal with its exit code (4 policy, 2 bad value, …).
std::optional<int> run_delegated(Context& ctx, std::optional<serve::SetRequest> set,
                                 const std::string& nothing_to_do, bool dry_run);

// Validates every request against its GPU (all problems before any write), then applies them
// as one transaction and prints the report. Returns 0 or throws Error.
int run_change(Context& ctx, control::ControlSession& session,
               const std::vector<DeviceRequest>& requests, bool snap,
               const std::string& nothing_to_do);

}  // namespace gpuclk::cli
