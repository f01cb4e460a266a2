#include "control/settings_writer.h"

#include <unistd.h>

#include <functional>
#include <map>
#include <optional>

#include "control/restore.h"
#include "control/transaction.h"
#include "util/error.h"

namespace gpuclk::control {
namespace {

const char* const kServiceHint =
    "as a user who is not root: the node's admin can run `gpuclk serve` with a policy that grants "
    "you these settings, and gpuclk then sends them to it (docs/serve.md, \"Delegated settings\")";

// A permission error of a direct write by a user who is not root names the service's way too.
std::string with_service_hint(const std::string& hint) {
  return hint.empty() ? kServiceHint : hint + "; or, " + kServiceHint;
}

// The direct way: journaled transactions through src/control, as `gpuclk set` runs them.
class DirectWriter : public SettingsWriter {
 public:
  DirectWriter(std::function<SessionOptions(const std::string&)> session_options,
               std::string command, WriterOptions options)
      : session_options_(std::move(session_options)),
        command_(std::move(command)),
        options_(options),
        root_(::geteuid() == 0) {
    if (options_.hold_journal) guarded([&] { held_.emplace(session_options_(command_), false); });
  }

  ChangeReport apply(const std::vector<Target>& targets, const std::string& command) override {
    return guarded([&] {
      return in_session(targets_gpus(targets), command,
                        [&](ControlSession& session, const std::vector<GpuControl*>& controls,
                            const RunOptions& options) {
                          std::vector<GpuChange> changes;
                          for (std::size_t i = 0; i < targets.size(); ++i) {
                            if (!targets[i].settings.empty())
                              changes.push_back({controls[i], targets[i].settings});
                          }
                          return control::apply_changes(changes, session.journal(),
                                                        session.persist(), options);
                        });
    });
  }

  ChangeReport restore(const std::vector<Previous>& gpus, const std::string& command) override {
    std::vector<gpu::Device*> fresh;
    std::vector<Target> journaled;
    for (const auto& p : gpus) {
      if (!p.journaled)
        fresh.push_back(p.gpu);
      else if (!p.settings.empty())
        journaled.push_back({p.gpu, p.settings});
    }
    ChangeReport report;
    if (!fresh.empty()) {
      report = guarded([&] {
        return in_session(fresh, command,
                          [&](ControlSession& session, const std::vector<GpuControl*>& controls,
                              RunOptions options) {
                            // A second signal must not cut a governor's last restore short.
                            if (held_) options.interrupted = {};
                            std::vector<std::string> only;
                            only.reserve(fresh.size());
                            for (const auto* g : fresh) only.push_back(g->uuid());
                            return control::restore(controls, session.journal(), session.persist(),
                                                    options, only);
                          });
      });
      if (report.exit != ExitCode::ok) return report;
    }
    if (!journaled.empty()) report.append(apply(journaled, command));
    return report;
  }

  const Journal* held_journal() override { return held_ ? &held_->journal() : nullptr; }

 private:
  using Controls = std::map<const gpu::Device*, std::unique_ptr<GpuControl>>;
  using Change =
      std::function<ChangeReport(ControlSession&, const std::vector<GpuControl*>&, RunOptions)>;

  static std::vector<gpu::Device*> targets_gpus(const std::vector<Target>& targets) {
    std::vector<gpu::Device*> out;
    out.reserve(targets.size());
    for (const auto& t : targets) out.push_back(t.gpu);
    return out;
  }

  // Runs `change` in the held session, or in one of its own (the journal's lock for this change).
  ChangeReport in_session(const std::vector<gpu::Device*>& gpus, const std::string& command,
                          const Change& change) {
    std::optional<ControlSession> own;
    if (!held_) own.emplace(session_options_(command), false);
    auto& session = held_ ? *held_ : *own;
    auto options = session.options();
    options.command = command;
    if (!options_.settle) {
      options.settle = {};  // a governor does not wait for the clock to settle
      options.after_write = {};
    }
    // The held session keeps one control per GPU for its lifetime; a change of its own, its own.
    Controls own_controls;
    auto& controls = held_ ? held_controls_ : own_controls;
    std::vector<GpuControl*> mine;
    for (auto* g : gpus) {
      auto& c = controls[g];
      if (!c) c = std::move(session.open({g}).front());
      mine.push_back(c.get());
    }
    auto report = change(session, mine, options);
    if (!root_ && report.exit == ExitCode::no_permission)
      report.hint = with_service_hint(report.hint);
    return report;
  }

  // A permission error of a user who is not root also names the service.
  template <class F>
  auto guarded(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      if (root_ || e.code() != ExitCode::no_permission) throw;
      throw Error(e.code(), e.what(), with_service_hint(e.hint()));
    }
  }

  std::function<SessionOptions(const std::string&)> session_options_;
  std::string command_;
  WriterOptions options_;
  bool root_;
  std::optional<ControlSession> held_;
  Controls held_controls_;
};

}  // namespace

std::unique_ptr<SettingsWriter> direct_settings_writer(
    std::function<SessionOptions(const std::string& command)> session_options,
    const std::string& command, WriterOptions options) {
  return std::make_unique<DirectWriter>(std::move(session_options), command, options);
}

}  // namespace gpuclk::control
