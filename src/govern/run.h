// The governor on GPUs: what `gpuclk govern` and `gpuclk serve --govern` share. Each interval,
// per GPU, the sampler's readings → Governor (classify, policy, hysteresis) → a clock
// lock handed to `write`; at the end one more log line per GPU and every GPU it touched handed
// to `restore`. Where the journal lives and when its lock is held is the caller's: `govern`
// holds it for the whole run, the service takes it for each write (docs/govern.md).
//
// Thread-safety: run() on one thread; state() from any thread while it runs.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "control/gpu_control.h"
#include "control/journal.h"
#include "control/report.h"
#include "govern/decision.h"
#include "govern/decision_log.h"
#include "govern/governor.h"
#include "govern/policy.h"
#include "gpu/device.h"
#include "telemetry/sampler.h"
#include "util/clock.h"

namespace gpuclk::govern {

// Writes one GPU's clock lock; the report's exit says whether it took. `held_by` set instead:
// another command holds this GPU's clocks (nothing written), the governor stands aside.
struct GovernWriteResult {
  control::ChangeReport report;
  std::optional<std::string> held_by;
};
using GovernWrite =
    std::function<GovernWriteResult(control::GpuControl&, const control::Settings&)>;
// Who else holds a GPU's clocks now (nullopt: nobody); asked once a second while the governor
// stands aside. Empty where nobody else can write while the governor runs (`gpuclk govern`
// holds the journal's lock throughout).
using GovernHeldBy = std::function<std::optional<std::string>(const gpu::Device&)>;

struct GovernSetup {
  std::string policy;  // checked by make_policy before anything starts
  PolicyOptions policy_options;
  telemetry::Duration interval = std::chrono::milliseconds(20);
  std::optional<telemetry::Duration> duration;  // stop after this long, as on SIGTERM
  bool dry_run = false;                         // decide and log, write nothing
  std::string log;                              // decision log (JSON Lines); empty: none
  std::function<bool()> interrupted;            // true: stop, restore, return
  std::string name = "gpuclk: ";                // prefix of its messages
  GovernHeldBy held_by;
};

// What a caller (the exporter) shows of one governed GPU.
struct GovernedGpuState {
  unsigned gpu = 0;
  std::string uuid;
  PhaseClass phase_class = PhaseClass::unknown;
  Decision decision;  // what is in force (written, or would be in a dry run)
  std::uint64_t decisions = 0, writes = 0;
  bool lost = false;
  std::string held_by;  // another command holds its clocks: the governor stands aside
};

// Puts the GPUs (their UUIDs) back to what the journal recorded before the first write.
using GovernRestore = std::function<control::ChangeReport(const std::vector<control::GpuControl*>&,
                                                          const std::vector<std::string>& uuids)>;

// --max-slowdown: "3%" or "0.03", a fraction in [0, 0.5]; throws Error (exit 2) naming `option`.
double parse_slowdown(const std::string& text, const char* option = "--max-slowdown");
// --interval, --duration: "20ms", "0.02", at least 10 ms; throws Error (exit 2).
telemetry::Duration parse_duration_option(const std::string& text, const char* option);

// Who holds GPU `uuid`'s clocks locked according to the journal, unless it is process `self`:
// "`gpuclk set` (pid 123, 2026-11-23T12:00:00Z)"; nullopt when nobody (or `self`) does.
std::optional<std::string> clocks_held_by(const control::Journal& journal, const std::string& uuid,
                                          long self);

// The GPUs of `devices` (their UUIDs) whose clock lock the journal says a governor set (`gpuclk
// govern`, `gpuclk serve --govern`) whose process is gone: killed, or crashed before it could
// put them back. Nobody else will: a governor starting puts them back first (a service
// restarted after a crash would otherwise refuse to start, the lock "held" by its dead self).
std::vector<std::string> abandoned_governor_locks(const control::Journal& journal,
                                                  const std::vector<gpu::Device*>& devices);

// Throws Error (exit 255) when a GPU in `devices` has clocks locked by another command that the
// journal still lists: a governor would overwrite them (and its restore would undo them).
void refuse_held_clocks(const control::Journal& journal, const std::vector<gpu::Device*>& devices);

class GovernorRun {
 public:
  // `controls[i]` writes `devices[i]`. Throws Error (exit 2) for an unknown policy, (exit 3)
  // for a GPU that lists no supported clocks; opens the decision log.
  GovernorRun(std::vector<gpu::Device*> devices, std::vector<control::GpuControl*> controls,
              const Clock& clock, GovernSetup setup, GovernWrite write, GovernRestore restore);
  ~GovernorRun();
  GovernorRun(const GovernorRun&) = delete;
  GovernorRun& operator=(const GovernorRun&) = delete;

  // Governs until interrupted, the duration is up, or every GPU is lost; restores. Returns 0, or
  // throws Error: the restore failed (its exit), every GPU was lost (exit 15).
  int run();

  std::vector<GovernedGpuState> state() const;
  const GovernSetup& setup() const { return setup_; }

 private:
  struct Gpu;
  // run()'s phases, in order: start, govern, stop (the log's last lines), restore.
  std::unique_ptr<telemetry::Sampler> start_sampler() const;
  std::size_t govern(const telemetry::Sampler& sampler);
  void resume_if_released(Gpu& g);
  void step(std::size_t i, telemetry::GpuSnapshot gpu_now, telemetry::TimePoint started,
            telemetry::Duration gpm_max_age, telemetry::Duration elapsed);
  bool write(Gpu& g, const Decision& d);
  void log_stop(double elapsed_s);
  int restore_and_finish(std::size_t decisions);

  std::vector<gpu::Device*> devices_;
  const Clock& clock_;
  GovernSetup setup_;
  GovernWrite write_;
  GovernRestore restore_;
  std::optional<DecisionLog> log_;
  std::vector<Gpu> gpus_;
  mutable std::mutex state_mutex_;
  std::vector<GovernedGpuState> state_;
};

}  // namespace gpuclk::govern
