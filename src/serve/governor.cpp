#include "serve/governor.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "control/restore.h"
#include "control/transaction.h"
#include "util/thread_name.h"

namespace gpuclk::serve {

ServiceGovernor::ServiceGovernor(control::SessionOptions session, const GovernOptions& o,
                                 const std::vector<gpu::Device*>& devices,
                                 const gpu::DeviceSet& all, const Clock& clock, bool keep_profile) {
  govern::GovernSetup setup;
  setup.policy = o.policy;
  setup.policy_options = o.policy_options;
  setup.interval = o.interval;
  setup.log = o.log;
  setup.name = "gpuclk serve: ";
  setup.interrupted = [this] { return stop_.load(); };
  govern::make_policy(setup.policy, setup.policy_options);  // a bad name stops here
  setup.dry_run = o.dry_run || session.read_only;
  if (session.read_only && !o.dry_run)
    std::cerr << "gpuclk serve: read-only mode: --govern runs as --govern-dry-run (decisions "
                 "logged, nothing written)\n";
  for (const auto* d : devices) {
    std::size_t i = 0;
    for (const auto& a : all) {
      if (a->uuid() == d->uuid()) position_[d->uuid()] = i;
      ++i;
    }
  }
  policy_ = setup.policy;
  dry_run_ = setup.dry_run;

  const std::string command = "serve --govern " + o.policy;
  session.command = command;
  if (setup.dry_run) {
    dry_session_.emplace(session, true);
    controls_ = dry_session_->open(devices);
  } else {
    session_.emplace(session);
    controls_ = session_->open(devices);
    put_back_abandoned(devices, command);
    if (auto journal = session_->peek()) govern::refuse_held_clocks(*journal, devices);
    const long self = static_cast<long>(::getpid());
    setup.held_by = [this, self](const gpu::Device& d) -> std::optional<std::string> {
      const auto journal = session_->peek();
      return journal ? govern::clocks_held_by(*journal, d.uuid(), self) : std::nullopt;
    };
  }
  std::vector<control::GpuControl*> raw;
  for (auto& c : controls_) raw.push_back(c.get());
  const std::string stop_command = command + " (stop)";
  run_.emplace(
      devices, raw, clock, setup,
      [this](control::GpuControl& gpu, const control::Settings& target) {
        govern::GovernWriteResult result;
        const long self = static_cast<long>(::getpid());
        result.report = session_->with_journal([&](control::Journal& journal,
                                                   const control::PersistJournal& persist) {
          if (auto who = govern::clocks_held_by(journal, gpu.facts().uuid, self)) {
            result.held_by = *who;
            return control::ChangeReport{};
          }
          return control::apply_changes({{&gpu, target}}, journal, persist, session_->options());
        });
        return result;
      },
      [this, stop_command, keep_profile](const std::vector<control::GpuControl*>& gpus,
                                         const std::vector<std::string>& uuids) {
        return session_->with_journal(
            [&](control::Journal& journal, const control::PersistJournal& persist) {
              auto options = session_->options();
              options.command = stop_command;
              if (!keep_profile) return control::restore(gpus, journal, persist, options, uuids);
              // With --profile the GPUs' other settings are the profile's, which stays applied:
              // only the clock lock goes back to what it was before the governor.
              std::vector<control::GpuChange> changes;
              for (auto* gpu : gpus) {
                control::Settings target;
                const auto* entry = journal.find(gpu->facts().uuid);
                target.locked_gpu_clocks = entry && entry->original.locked_gpu_clocks
                                               ? *entry->original.locked_gpu_clocks
                                               : control::ClockLock::none();
                changes.push_back({gpu, target});
              }
              return control::apply_changes(changes, journal, persist, options);
            });
      });
}

void ServiceGovernor::put_back_abandoned(const std::vector<gpu::Device*>& devices,
                                         const std::string& command) {
  const auto journal = session_->peek();
  if (!journal) return;
  const auto abandoned = govern::abandoned_governor_locks(*journal, devices);
  if (abandoned.empty()) return;
  const auto report =
      session_->with_journal([&](control::Journal& j, const control::PersistJournal& persist) {
        std::vector<control::GpuChange> changes;
        for (std::size_t i = 0; i < devices.size(); ++i) {
          if (std::find(abandoned.begin(), abandoned.end(), devices[i]->uuid()) == abandoned.end())
            continue;
          const auto* entry = j.find(devices[i]->uuid());
          control::Settings target;
          target.locked_gpu_clocks = entry && entry->original.locked_gpu_clocks
                                         ? *entry->original.locked_gpu_clocks
                                         : control::ClockLock::none();
          changes.push_back({controls_[i].get(), target});
        }
        auto options = session_->options();
        options.command = command + " (a governor that is gone left it)";
        return control::apply_changes(changes, j, persist, options);
      });
  for (const auto& s : report.settings)
    std::cerr << "gpuclk serve: GPU " << s.gpu
              << ": its clocks were locked by a governor that is gone (killed or crashed); put "
                 "back to "
              << s.target << "\n";
  if (report.exit != ExitCode::ok)
    throw Error(report.exit, "cannot put back the clocks a governor that is gone left locked",
                "run `gpuclk restore` as root");
}

void ServiceGovernor::start() {
  thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-govern");
    try {
      run_->run();
    } catch (const Error& e) {
      std::cerr << "gpuclk serve: governor: " << e.what() << "\n";
      failed_ = e.code();
    }
  });
}

ExitCode ServiceGovernor::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return failed_;
}

std::vector<ExtraSeries> ServiceGovernor::series() const {
  std::vector<ExtraSeries> out;
  out.push_back({"gpuclk_governor_info",
                 "The governor running in the service (value 1)",
                 false,
                 std::nullopt,
                 {{"policy", policy_}, {"dry_run", dry_run_ ? "1" : "0"}},
                 1.0});
  for (const auto& g : run_->state()) {
    const auto at = position_.find(g.uuid);
    if (at == position_.end()) continue;
    const auto gpu = std::optional<std::size_t>(at->second);
    for (int c = 0; c < govern::kPhaseClassCount; ++c) {
      const auto phase = static_cast<govern::PhaseClass>(c);
      out.push_back({"gpuclk_governor_class",
                     "1 for the class the governor gave the GPU's last interval",
                     false,
                     gpu,
                     {{"class", std::string(govern::to_string(phase))}},
                     g.phase_class == phase ? 1.0 : 0.0});
    }
    out.push_back({"gpuclk_governor_clocks_locked",
                   "1 while the governor holds the SM clock in a range (written, or would be in "
                   "a dry run)",
                   false,
                   gpu,
                   {},
                   g.decision.locked ? 1.0 : 0.0});
    if (g.decision.locked)
      out.push_back({"gpuclk_governor_clock_max_hertz",
                     "Highest SM clock the governor allows",
                     false,
                     gpu,
                     {},
                     g.decision.max.value() * 1e6});
    out.push_back({"gpuclk_governor_standing_aside",
                   "1 while another command holds the GPU's clocks and the governor leaves it",
                   false,
                   gpu,
                   {},
                   g.held_by.empty() ? 0.0 : 1.0});
    out.push_back({"gpuclk_governor_decisions_total",
                   "Governor decisions taken",
                   true,
                   gpu,
                   {},
                   static_cast<double>(g.decisions)});
    out.push_back({"gpuclk_governor_writes_total",
                   "Clock locks the governor wrote",
                   true,
                   gpu,
                   {},
                   static_cast<double>(g.writes)});
    out.push_back({"gpuclk_governor_gpu_lost",
                   "1 when the governed GPU was lost",
                   false,
                   gpu,
                   {},
                   g.lost ? 1.0 : 0.0});
  }
  return out;
}

ServiceGovernor::~ServiceGovernor() { stop(); }

}  // namespace gpuclk::serve
