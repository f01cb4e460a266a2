#include "govern/run.h"

#include <fmt/format.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <iostream>

#include "govern/sampler_signals.h"
#include "gpu/gpm.h"
#include "host/process.h"
#include "telemetry/interval.h"
#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::govern {

using namespace std::chrono_literals;

namespace {

ClockLadder ladder_of(const control::GpuFacts& facts) {
  if (!facts.supported_clocks || facts.supported_clocks->empty()) {
    throw Error(
        ExitCode::not_supported,
        fmt::format("GPU {} does not list its supported clocks: nothing to govern", facts.index));
  }
  // The graphics clocks of the highest memory clock (NVML lists it first).
  return ClockLadder(facts.supported_clocks->front().graphics, Megahertz(0));
}

}  // namespace

std::optional<std::string> clocks_held_by(const control::Journal& journal, const std::string& uuid,
                                          long self) {
  const auto* entry = journal.find(uuid);
  if (!entry || !entry->applied.locked_gpu_clocks || !entry->applied.locked_gpu_clocks->locked)
    return std::nullopt;
  const auto key = control::key_of(control::Setting::locked_gpu_clocks);
  for (auto it = journal.history.rbegin(); it != journal.history.rend(); ++it) {
    if (it->uuid != uuid || it->setting != key || it->outcome != "ok") continue;
    if (it->pid == self && self != 0) return std::nullopt;
    return fmt::format("`gpuclk {}` (pid {}, {})", it->command, it->pid, it->time);
  }
  return std::string("an earlier gpuclk command");
}

double parse_slowdown(const std::string& text, const char* option) {
  // A percentage ("3%", "3 %") or a fraction ("0.03").
  std::string t = text;
  bool percent = false;
  while (!t.empty() && (t.back() == '%' || t.back() == ' ')) {
    percent = percent || t.back() == '%';
    t.pop_back();
  }
  const auto v = percent ? parse::try_real(t, 0, 50) : parse::try_real(t, 0, 0.5);
  if (!v) {
    throw bad_argument(fmt::format("bad {} '{}'", option, parse::quote(text)),
                       "give a percentage (3%) or a fraction (0.03), at most 50%");
  }
  return percent ? *v / 100 : *v;
}

telemetry::Duration parse_duration_option(const std::string& text, const char* option) {
  const auto min = std::chrono::duration<double>(telemetry::kMinInterval).count();
  return telemetry::duration_option(text, option, min, 86400, "20ms, 0.5, 2s or 1h");
}

namespace {

// Whether process `pid` is gone, or is no gpuclk any more (its pid reused since).
bool gpuclk_gone(long pid) {
  if (pid <= 0) return true;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  const auto info = host::read_process(static_cast<unsigned>(pid));
  return info && info->command.find("gpuclk") == std::string::npos;
}

}  // namespace

std::vector<std::string> abandoned_governor_locks(const control::Journal& journal,
                                                  const std::vector<gpu::Device*>& devices) {
  std::vector<std::string> out;
  const auto key = control::key_of(control::Setting::locked_gpu_clocks);
  for (const auto* d : devices) {
    const auto* entry = journal.find(d->uuid());
    if (!entry || !entry->applied.locked_gpu_clocks || !entry->applied.locked_gpu_clocks->locked)
      continue;
    for (auto it = journal.history.rbegin(); it != journal.history.rend(); ++it) {
      if (it->uuid != d->uuid() || it->setting != key || it->outcome != "ok") continue;
      const bool governor =
          it->command.starts_with("govern ") || it->command.starts_with("serve --govern ");
      if (governor && gpuclk_gone(it->pid)) out.push_back(d->uuid());
      break;
    }
  }
  return out;
}

void refuse_held_clocks(const control::Journal& journal, const std::vector<gpu::Device*>& devices) {
  for (const auto* d : devices) {
    const auto who = clocks_held_by(journal, d->uuid(), 0);
    if (!who) continue;
    throw Error(
        ExitCode::other,
        fmt::format("GPU {} has its clocks locked ({}) by {}; a governor would overwrite them",
                    d->index(),
                    control::describe(journal.find(d->uuid())->applied,
                                      control::Setting::locked_gpu_clocks),
                    *who),
        "stop that governor, or run `gpuclk restore` (or `gpuclk reset --gpu-clocks`) first");
  }
}

struct GovernorRun::Gpu {
  gpu::Device* device = nullptr;
  control::GpuControl* control = nullptr;
  std::unique_ptr<Governor> governor;
  bool gpm = false;
  bool lost = false;
  bool touched = false;                           // a lock was written
  std::uint64_t writes = 0;                       // locks that landed
  std::optional<telemetry::SlowSample> last_gpm;  // the newest slow sample that had GPM
  std::optional<PhaseClass> last_class;
  std::optional<Decision> last_logged;
  std::uint64_t decisions = 0;
  std::string held_by;                               // standing aside for this command
  std::chrono::steady_clock::time_point held_check;  // last asked whether it still holds
};

GovernorRun::GovernorRun(std::vector<gpu::Device*> devices,
                         std::vector<control::GpuControl*> controls, const Clock& clock,
                         GovernSetup setup, GovernWrite write, GovernRestore restore)
    : devices_(std::move(devices)),
      clock_(clock),
      setup_(std::move(setup)),
      write_(std::move(write)),
      restore_(std::move(restore)) {
  make_policy(setup_.policy, setup_.policy_options);  // checks the name first
  if (!setup_.log.empty()) log_.emplace(setup_.log);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    Gpu g;
    g.device = devices_[i];
    g.control = controls[i];
    if (!devices_[i]->available()) {
      std::cerr << fmt::format("{}GPU {} is not available; the others go on\n", setup_.name,
                               devices_[i]->index());
      g.lost = true;
      gpus_.push_back(std::move(g));
      continue;
    }
    g.gpm = gpu::GpmSampler(*devices_[i]).supported();
    g.governor = std::make_unique<Governor>(make_policy(setup_.policy, setup_.policy_options),
                                            ladder_of(g.control->facts()));
    gpus_.push_back(std::move(g));
  }
  for (const auto& g : gpus_) {
    GovernedGpuState s;
    s.gpu = g.device->index();
    s.uuid = g.device->uuid();
    s.lost = g.lost;
    state_.push_back(std::move(s));
  }
}

GovernorRun::~GovernorRun() = default;

std::vector<GovernedGpuState> GovernorRun::state() const {
  std::lock_guard lock(state_mutex_);
  return state_;
}

bool GovernorRun::write(Gpu& g, const Decision& d) {
  control::Settings target;
  target.locked_gpu_clocks = d.clock_lock();
  const auto result = write_(*g.control, target);
  if (result.held_by) {
    g.held_by = *result.held_by;
    g.held_check = std::chrono::steady_clock::now();
    std::cerr << fmt::format(
        "{}GPU {}: clocks held by {}; the governor stands aside until they are "
        "released\n",
        setup_.name, g.device->index(), g.held_by);
    return false;
  }
  const auto& report = result.report;
  if (report.exit == ExitCode::ok) {
    g.touched = true;
    ++g.writes;
    return true;
  }
  const bool lost =
      report.exit == ExitCode::gpu_lost || report.error.find("lost") != std::string::npos;
  std::cerr << fmt::format("{}GPU {}: writing {} failed: {}\n", setup_.name, g.device->index(),
                           d.text(), report.error);
  if (lost) {
    std::cerr << fmt::format("{}GPU {} is lost; the others go on\n", setup_.name,
                             g.device->index());
    g.lost = true;
  }
  return false;
}

// Phase 1, start: the sampler reads what the policies need, every interval on every GPU.
std::unique_ptr<telemetry::Sampler> GovernorRun::start_sampler() const {
  telemetry::SamplerOptions so;
  so.fast_interval = setup_.interval;
  so.slow_interval = setup_.interval;  // GPM every interval, on each GPU's own thread
  so.fields = {telemetry::Field::sm_clock,      telemetry::Field::memory_clock,
               telemetry::Field::power,         telemetry::Field::utilization,
               telemetry::Field::clock_reasons, telemetry::Field::gpm};
  so.fast_capacity = 64;
  so.slow_capacity = 64;
  auto sampler = std::make_unique<telemetry::Sampler>(
      telemetry::device_sources(devices_, so.fields), clock_, so);
  sampler->start();
  std::cerr << fmt::format(
      "{}governing {} GPU(s) with policy {} every {:.0f} ms{}\n", setup_.name, gpus_.size(),
      setup_.policy, std::chrono::duration<double, std::milli>(setup_.interval).count(),
      setup_.dry_run ? " (dry run: nothing written)" : "; Ctrl-C or SIGTERM restores the clocks");
  return sampler;
}

// Phase 2, govern: each tick, every GPU not lost takes one step. Until interrupted, the duration
// is up, or every GPU is lost; returns the number of decisions.
std::size_t GovernorRun::govern(const telemetry::Sampler& sampler) {
  const auto started = sampler.started_at();
  // A GPM reading up to 5 intervals (at least 100 ms) old still describes the work; older, it is
  // missing (→ max clock). The slow thread reads it every interval, but a busy host delays it.
  const telemetry::Duration gpm_max_age =
      std::max<telemetry::Duration>(5 * setup_.interval, std::chrono::milliseconds(100));
  const auto interrupted = [&] { return setup_.interrupted && setup_.interrupted(); };
  std::uint64_t seen = 0;
  std::size_t decisions = 0;
  while (!interrupted()) {
    seen = sampler.wait_for_tick(seen, 1000ms);
    if (interrupted()) break;
    const auto snapshot = sampler.snapshot();
    const auto elapsed = snapshot.time - started;
    std::size_t active = 0;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      auto& g = gpus_[i];
      if (g.lost || snapshot.gpus[i].health.lost) {
        if (!g.lost)
          std::cerr << fmt::format("{}GPU {} is lost; the others go on\n", setup_.name,
                                   g.device->index());
        g.lost = true;
        std::lock_guard lock(state_mutex_);
        state_[i].lost = true;
        continue;
      }
      ++active;
      resume_if_released(g);
      step(i, snapshot.gpus[i], started, gpm_max_age, elapsed);
      ++decisions;
    }
    if (active == 0) break;
    if (setup_.duration && elapsed >= *setup_.duration) break;
  }
  return decisions;
}

// While another command holds a GPU's clocks, asked once a second whether it still does; once
// released, the governor writes its decision again.
void GovernorRun::resume_if_released(Gpu& g) {
  if (g.held_by.empty() || !setup_.held_by || std::chrono::steady_clock::now() - g.held_check < 1s)
    return;
  g.held_check = std::chrono::steady_clock::now();
  if (setup_.held_by(*g.device)) return;
  std::cerr << fmt::format("{}GPU {}: {} released its clocks; governing again\n", setup_.name,
                           g.device->index(), g.held_by);
  g.held_by.clear();
  g.touched = false;           // that command's restore put back what the journal had
  g.governor->write_failed();  // the next step writes its decision again
}

// One GPU's step: its signals → the governor's decision → written (unless a dry run or held by
// another command), logged when it changed or was written, published in state().
void GovernorRun::step(std::size_t i, telemetry::GpuSnapshot gpu_now, telemetry::TimePoint started,
                       telemetry::Duration gpm_max_age, telemetry::Duration elapsed) {
  auto& g = gpus_[i];
  // A slow read without GPM (a window kept open: the driver's counters had not moved) leaves
  // the previous reading in force while it is young enough (gpm_max_age).
  if (gpu_now.slow && gpu_now.slow->gpm) {
    g.last_gpm = gpu_now.slow;
  } else if (g.last_gpm) {
    gpu_now.slow = g.last_gpm;
  }
  const auto signals = signals_from(gpu_now, started, gpm_max_age, g.gpm);
  const auto step = g.governor->step(signals);
  ++g.decisions;
  bool written = false;
  if (step.write && !setup_.dry_run && g.held_by.empty()) {
    written = write(g, step.decision);
    if (!written) g.governor->write_failed();
  }
  const bool changed = !g.last_class || *g.last_class != step.phase_class || !g.last_logged ||
                       !(*g.last_logged == step.decision);
  if (log_ && (changed || step.write)) {
    LogEntry entry;
    entry.time = control::utc_now();
    entry.elapsed_s = std::chrono::duration<double>(elapsed).count();
    entry.gpu = g.device->index();
    entry.uuid = g.device->uuid();
    entry.signals = signals;
    entry.phase_class = step.phase_class;
    entry.decision = step.decision;
    entry.written = written || (step.write && setup_.dry_run);
    entry.reason = step.proposal.reason;
    log_->write(entry);
  }
  g.last_class = step.phase_class;
  g.last_logged = step.decision;
  std::lock_guard lock(state_mutex_);
  auto& s = state_[i];
  s.phase_class = step.phase_class;
  s.decision = step.decision;
  s.decisions = g.decisions;
  s.writes = setup_.dry_run ? 0 : g.governor->writes();
  s.lost = g.lost;
  s.held_by = g.held_by;
}

// Phase 3, stop: one more log line per GPU, so the report knows how long the last state lasted.
void GovernorRun::log_stop(double elapsed_s) {
  if (!log_) return;
  for (auto& g : gpus_) {
    if (!g.last_class) continue;
    LogEntry entry;
    entry.time = control::utc_now();
    entry.elapsed_s = elapsed_s;
    entry.gpu = g.device->index();
    entry.uuid = g.device->uuid();
    entry.phase_class = *g.last_class;
    entry.decision = Decision::release();
    // The restore is the journal's, not a clock write of the policy: counted as one, --report
    // said 102 writes where the run had said 98 (one per GPU).
    entry.written = false;
    entry.reason = g.touched && !g.lost ? "governor stopped: clocks restored"
                                        : "governor stopped: nothing to restore";
    log_->write(entry);
  }
}

// Phase 4, restore: every touched GPU back to what the journal recorded before the first write;
// the run's summary line; throws where the restore failed or every GPU was lost.
int GovernorRun::restore_and_finish(std::size_t decisions) {
  // Writes that landed (a refused or failed one is not counted; in a dry run, those decided).
  std::uint64_t writes = 0;
  std::vector<control::GpuControl*> present;
  std::vector<std::string> restore_only;
  for (auto& g : gpus_) {
    writes += setup_.dry_run ? (g.governor ? g.governor->writes() : 0) : g.writes;
    // A GPU whose clocks another command took over is that command's to restore.
    if (!g.lost && g.touched && g.held_by.empty()) {
      present.push_back(g.control);
      restore_only.push_back(g.device->uuid());
    }
  }
  ExitCode code = ExitCode::ok;
  std::string restore_error;
  if (!setup_.dry_run && !present.empty()) {
    const auto report = restore_(present, restore_only);
    if (report.exit != ExitCode::ok) {
      code = report.exit;
      restore_error = report.error;
    }
  }
  {
    std::lock_guard lock(state_mutex_);
    for (auto& s : state_) s.decision = Decision::release();
  }
  std::size_t lost = 0;
  for (const auto& g : gpus_) lost += g.lost ? 1 : 0;
  std::cerr << fmt::format("{}govern stopped: {} decisions, {} clock writes{}{}\n", setup_.name,
                           decisions, setup_.dry_run ? 0 : writes,
                           setup_.dry_run    ? " (dry run)"
                           : present.empty() ? "; nothing to restore"
                                             : "; clocks restored",
                           lost ? fmt::format("; {} GPU(s) lost", lost) : "");
  if (code != ExitCode::ok) {
    throw Error(code, "restoring the clocks failed: " + restore_error,
                "run `gpuclk restore` (the journal keeps the original settings)");
  }
  if (lost == gpus_.size()) {
    throw Error(ExitCode::gpu_lost, "every governed GPU was lost",
                "check the GPUs (nvidia-smi, dmesg); `gpuclk restore` once they are back");
  }
  return 0;
}

int GovernorRun::run() {
  const auto sampler = start_sampler();
  const auto decisions = govern(*sampler);
  sampler->stop();
  log_stop(std::chrono::duration<double>(sampler->now() - sampler->started_at()).count());
  return restore_and_finish(decisions);
}

}  // namespace gpuclk::govern
