#include "cli/settings_writer.h"

#include <unistd.h>

#include <functional>
#include <map>

#include "cli/cmd_control.h"
#include "control/journal.h"
#include "control/request.h"
#include "control/restore.h"
#include "control/transaction.h"
#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::cli {
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
  DirectWriter(Context& ctx, std::string command, WriterOptions options)
      : ctx_(ctx), command_(std::move(command)), options_(options), root_(::geteuid() == 0) {
    if (options_.hold_journal)
      guarded([&] { held_.emplace(session_options(ctx_, command_), false); });
  }

  control::ChangeReport apply(const std::vector<Target>& targets,
                              const std::string& command) override {
    return guarded([&] {
      return in_session(
          targets_gpus(targets), command,
          [&](control::ControlSession& session, const std::vector<control::GpuControl*>& controls,
              const control::RunOptions& options) {
            std::vector<control::GpuChange> changes;
            for (std::size_t i = 0; i < targets.size(); ++i) {
              if (!targets[i].settings.empty())
                changes.push_back({controls[i], targets[i].settings});
            }
            return control::apply_changes(changes, session.journal(), session.persist(), options);
          });
    });
  }

  control::ChangeReport restore(const std::vector<Previous>& gpus,
                                const std::string& command) override {
    std::vector<gpu::Device*> fresh;
    std::vector<Target> journaled;
    for (const auto& p : gpus) {
      if (!p.journaled)
        fresh.push_back(p.gpu);
      else if (!p.settings.empty())
        journaled.push_back({p.gpu, p.settings});
    }
    control::ChangeReport report;
    if (!fresh.empty()) {
      report = guarded([&] {
        return in_session(
            fresh, command,
            [&](control::ControlSession& session, const std::vector<control::GpuControl*>& controls,
                control::RunOptions options) {
              // A second signal must not cut a governor's last restore short.
              if (held_) options.interrupted = {};
              std::vector<std::string> only;
              only.reserve(fresh.size());
              for (const auto* g : fresh) only.push_back(g->uuid());
              return control::restore(controls, session.journal(), session.persist(), options,
                                      only);
            });
      });
      if (report.exit != ExitCode::ok) return report;
    }
    if (!journaled.empty()) report.append(apply(journaled, command));
    return report;
  }

  const control::Journal* held_journal() override { return held_ ? &held_->journal() : nullptr; }

 private:
  using Controls = std::map<const gpu::Device*, std::unique_ptr<control::GpuControl>>;
  using Change = std::function<control::ChangeReport(
      control::ControlSession&, const std::vector<control::GpuControl*>&, control::RunOptions)>;

  static std::vector<gpu::Device*> targets_gpus(const std::vector<Target>& targets) {
    std::vector<gpu::Device*> out;
    out.reserve(targets.size());
    for (const auto& t : targets) out.push_back(t.gpu);
    return out;
  }

  // Runs `change` in the held session, or in one of its own (the journal's lock for this change).
  control::ChangeReport in_session(const std::vector<gpu::Device*>& gpus,
                                   const std::string& command, const Change& change) {
    std::optional<control::ControlSession> own;
    if (!held_) own.emplace(session_options(ctx_, command), false);
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
    std::vector<control::GpuControl*> mine;
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

  Context& ctx_;
  std::string command_;
  WriterOptions options_;
  bool root_;
  std::optional<control::ControlSession> held_;
  Controls held_controls_;
};

// The delegated way: `set` and `restore` requests to the service, which checks each against
// its policy, the holders and the requester's session, and writes them journaled (its log has a
// line for each). GPUs are named by index, as `gpuclk set -i` names them to the service.
class DelegatedWriter : public SettingsWriter {
 public:
  DelegatedWriter(Context& ctx, WriterOptions options) : ctx_(ctx), options_(options) {}

  control::ChangeReport apply(const std::vector<Target>& targets, const std::string&) override {
    // One request for each distinct set of values (a sweep point: one for all its GPUs), keyed
    // by the settings' text: the settings and the GPUs' indexes.
    std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> requests;
    for (const auto& t : targets) {
      if (t.settings.empty()) continue;
      // The values in the journal's typed form (control::request_to_json).
      const auto settings = nlohmann::json::parse(control::settings_to_json(t.settings));
      auto& [text_settings, gpus] = requests[settings.dump()];
      text_settings = settings;
      if (gpus.is_null()) gpus = nlohmann::json::array();
      gpus.push_back(t.gpu->index());
    }
    control::ChangeReport all;
    for (const auto& [key, request] : requests) {
      nlohmann::json r = {
          {"request", "set"}, {"settings", request.first}, {"gpus", request.second}};
      if (!options_.settle) r["settle"] = false;
      all.append(ask(r));
      if (all.exit != ExitCode::ok) break;
    }
    return all;
  }

  control::ChangeReport restore(const std::vector<Previous>& gpus, const std::string&) override {
    nlohmann::json indexes = nlohmann::json::array();
    for (const auto& p : gpus) indexes.push_back(p.gpu->index());
    return ask({{"request", "restore"}, {"gpus", indexes}});
  }

 private:
  control::ChangeReport ask(const nlohmann::json& request) {
    const auto response = ctx_.ask_service(request);
    if (!response)
      throw Error(ExitCode::other, "the service that takes delegated settings went away",
                  "run `gpuclk restore` once it is back");
    return serve::change_report_from_json(response->at("report"));
  }

  Context& ctx_;
  WriterOptions options_;
};

}  // namespace

std::optional<nlohmann::json> delegating_service(Context& ctx) {
  if (::geteuid() == 0) return std::nullopt;
  auto hello = ctx.service_hello();
  if (!hello || !hello->contains("delegation")) return std::nullopt;
  return hello;
}

std::unique_ptr<SettingsWriter> settings_writer(Context& ctx, const std::string& command,
                                                WriterOptions options) {
  (void)control::allow_writes(ctx.read_only(), command);
  if (delegating_service(ctx)) return std::make_unique<DelegatedWriter>(ctx, options);
  return std::make_unique<DirectWriter>(ctx, command, options);
}

}  // namespace gpuclk::cli
