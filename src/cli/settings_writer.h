// Where the setting changes of `sweep` and `govern` go: straight to the GPUs as journaled
// transactions (root; control::ControlSession, control/session.h), or, for a user who is not root,
// to a running `gpuclk serve` that takes delegated settings, as `set` and `restore` requests over
// its socket (docs/serve.md, "Delegated settings"), where the admin's policy, the holders and the
// sessions are checked for each write. The commands say what to write; settings_writer() picks
// the way, as `gpuclk set` and `restore` pick it (run_delegated).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "control/journal.h"
#include "control/report.h"
#include "control/settings.h"
#include "gpu/device.h"

namespace gpuclk::cli {

class SettingsWriter {
 public:
  struct Target {
    gpu::Device* gpu = nullptr;
    control::Settings settings;  // exact values, as control::validate returns them
  };
  virtual ~SettingsWriter() = default;

  // One change of every target. The report says what landed (its exit: a failed write, 16, 15);
  // throws Error when the change cannot start (the journal's lock, read-only mode) or the service
  // refuses it (its exit code, 4 naming the rule or the holder).
  virtual control::ChangeReport apply(const std::vector<Target>& targets,
                                      const std::string& command) = 0;
  // What a GPU had before the command, for restore(). `journaled`: the journal listed it then,
  // so its originals there are older than the command and only `settings` (what the command
  // changes, as it was) go back.
  struct Previous {
    gpu::Device* gpu = nullptr;
    bool journaled = false;
    control::Settings settings;  // exact values, as control::validate returns them
  };
  // The GPUs back to what they had before this command's first change. Direct: one not
  // `journaled` from the journal's originals (it leaves the journal), one `journaled` gets its
  // `settings` written back. Delegated: the service's `restore` of this user's grants on them,
  // which ends those grants (the service keeps what each GPU had before the user's first grant).
  virtual control::ChangeReport restore(const std::vector<Previous>& gpus,
                                        const std::string& command) = 0;
  // The journal as it is under the lock this writer holds for its lifetime; nullptr when it
  // holds none (per change, or the service's).
  virtual const control::Journal* held_journal() { return nullptr; }
};

struct WriterOptions {
  // Direct: take the journal's lock once, for the writer's lifetime (`govern`: nobody else writes
  // while it governs), instead of for each change (`sweep`).
  bool hold_journal = false;
  // Wait for written clocks to take effect before reading them back (50 ms); a governor does not.
  bool settle = true;
};

// The hello of a `gpuclk serve` that takes delegated settings (it names a policy), when this
// process is not root and --direct is not given; nullopt: write directly.
std::optional<nlohmann::json> delegating_service(Context& ctx);

// The writer for `command`: delegated when delegating_service() answers, else direct. A direct
// writer for a user who is not root fails as before (exit 4: NVML's or the journal's
// permission), its hint now naming `gpuclk serve` with a policy. Throws Error (exit 4) in
// read-only mode.
std::unique_ptr<SettingsWriter> settings_writer(Context& ctx, const std::string& command,
                                                WriterOptions options = {});

}  // namespace gpuclk::cli
