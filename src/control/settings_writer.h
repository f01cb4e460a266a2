// Where the setting changes of `sweep` and `govern` go: straight to the GPUs as journaled
// transactions (root; a ControlSession, session.h: direct_settings_writer below), or, for a user
// who is not root, to a running `gpuclk serve` that takes delegated settings, as `set` and
// `restore` requests over its socket (serve/delegated_settings.h), where the admin's policy, the
// holders and the sessions are checked for each write. The commands say what to write; the CLI
// picks the way, as `gpuclk set` and `restore` pick it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "control/journal.h"
#include "control/report.h"
#include "control/session.h"
#include "control/settings.h"
#include "gpu/device.h"

namespace gpuclk::control {

class SettingsWriter {
 public:
  struct Target {
    gpu::Device* gpu = nullptr;
    Settings settings;  // exact values, as control::validate returns them
  };
  virtual ~SettingsWriter() = default;

  // One change of every target. The report says what landed (its exit: a failed write, 16, 15);
  // throws Error when the change cannot start (the journal's lock, read-only mode) or the service
  // refuses it (its exit code, 4 naming the rule or the holder).
  virtual ChangeReport apply(const std::vector<Target>& targets, const std::string& command) = 0;
  // What a GPU had before the command, for restore(). `journaled`: the journal listed it then,
  // so its originals there are older than the command and only `settings` (what the command
  // changes, as it was) go back.
  struct Previous {
    gpu::Device* gpu = nullptr;
    bool journaled = false;
    Settings settings;  // exact values, as control::validate returns them
  };
  // The GPUs back to what they had before this command's first change. Direct: one not
  // `journaled` from the journal's originals (it leaves the journal), one `journaled` gets its
  // `settings` written back. Delegated: the service's `restore` of this user's grants on them,
  // which ends those grants (the service keeps what each GPU had before the user's first grant).
  virtual ChangeReport restore(const std::vector<Previous>& gpus, const std::string& command) = 0;
  // The journal as it is under the lock this writer holds for its lifetime; nullptr when it
  // holds none (per change, or the service's).
  virtual const Journal* held_journal() { return nullptr; }
};

struct WriterOptions {
  // Direct: take the journal's lock once, for the writer's lifetime (`govern`: nobody else writes
  // while it governs), instead of for each change (`sweep`).
  bool hold_journal = false;
  // Wait for written clocks to take effect before reading them back (50 ms); a governor does not.
  bool settle = true;
};

// The direct writer: journaled transactions, as `gpuclk set` runs them. `session_options` gives
// the options of a journal session for a command (the CLI's global flags). A permission error
// (exit 4) of a user who is not root names `gpuclk serve`'s delegated settings in its hint.
std::unique_ptr<SettingsWriter> direct_settings_writer(
    std::function<SessionOptions(const std::string& command)> session_options,
    const std::string& command, WriterOptions options = {});

}  // namespace gpuclk::control
