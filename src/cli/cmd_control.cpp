#include "cli/cmd_control.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "control/test_pause.h"
#include "control/validate.h"
#include "gpu/simulator.h"
#include "serve/client.h"
#include "serve/delegated_settings.h"

namespace gpuclk::cli {
namespace {

namespace fs = std::filesystem;
using control::Outcome;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

output::Table report_table(const control::ChangeReport& report) {
  output::Table t;
  t.columns = {{"gpu", "GPU"},
               {"setting", "Setting", true},
               {"before", "Before", true},
               {"target", "Target", true},
               {"read_back", "Read back", true},
               {"result", "Result", true}};
  for (const auto& s : report.settings) {
    t.rows.push_back({output::integer(s.gpu),
                      output::text(std::string(control::label_of(s.setting))),
                      output::text(s.before), output::text(s.target),
                      s.read_back.empty() ? output::na() : output::text(s.read_back),
                      output::text(std::string(control::to_string(s.outcome)))});
  }
  return t;
}

std::string summary(const control::ChangeReport& report, const std::string& journal_file,
                    const std::string& nothing_to_do, bool dry_run) {
  std::set<unsigned> gpus;
  for (const auto& s : report.settings) {
    if (s.outcome == Outcome::changed || s.outcome == Outcome::would_change) gpus.insert(s.gpu);
  }
  if (dry_run) {
    const auto n = report.count(Outcome::would_change);
    return n == 0 ? nothing_to_do + "; dry run, nothing written"
                  : fmt::format("dry run: would change {} setting(s) on {} GPU(s); nothing written",
                                n, gpus.size());
  }
  if (report.exit != ExitCode::ok) return {};
  const auto n = report.count(Outcome::changed);
  if (n == 0) return nothing_to_do;
  return fmt::format("changed {} setting(s) on {} GPU(s); journal {}", n, gpus.size(),
                     journal_file);
}

}  // namespace

fs::path journal_dir(Context& ctx) {
  if (!ctx.options.state_dir.empty()) return ctx.options.state_dir;
  if (auto env = env_or_empty("GPUCLK_STATE_DIR"); !env.empty()) return env;
  bool simulated = !ctx.options.sim.empty();
  if (!simulated) {
    try {
      simulated = ctx.simulated();
    } catch (const Error&) {
      // No NVML at all: the default directory, for `gpuclk journal` on any host.
    }
  }
  if (simulated) {
    // Beside the simulator's own state: each simulated node has its own journal.
    std::string state = gpu::simulator_state_path(ctx.nvml());
    if (state.empty()) state = fmt::format("/tmp/gpuclk-sim-{}", ::getuid());
    return state + ".gpuclk";
  }
  return ctx.state_dir();
}

std::optional<control::Journal> peek_journal(Context& ctx) {
  try {
    const control::JournalStore store(journal_dir(ctx));
    auto journal = store.try_load();
    // A damaged journal hides what gpuclk set ("Set by gpuclk", locks): said once, not silently.
    static std::atomic<bool> told{false};
    if (!journal) {
      if (const auto damage = store.damage(); damage && !told.exchange(true))
        std::cerr << "gpuclk: warning: " << *damage << "\n";
    }
    return journal;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

control::SessionOptions session_options(Context& ctx, std::string command, bool dry_run) {
  if (!dry_run) (void)control::allow_writes(ctx.read_only(), command);
  control::SessionOptions o;
  o.journal_dir = journal_dir(ctx);
  o.command = std::move(command);
  o.read_only = ctx.read_only();
  o.simulated = [&ctx] { return ctx.simulated(); };
  o.after_write = control::test_pause_hook([&ctx] { return ctx.simulated(); });
  o.before_lock = [&ctx](std::string_view what) { ctx.effect(what); };
  return o;
}

int finish(Context& ctx, const control::ControlSession& session,
           const control::ChangeReport& report, const std::string& nothing_to_do) {
  return print_change_report(ctx, report, session.store().file().string(), nothing_to_do,
                             session.dry_run());
}

int print_change_report(Context& ctx, const control::ChangeReport& report,
                        const std::string& journal_file, const std::string& nothing_to_do,
                        bool dry_run) {
  const auto format = ctx.format();
  const auto line = summary(report, journal_file, nothing_to_do, dry_run);
  auto printer = ctx.printer();
  if (format.kind == output::Format::Kind::json) {
    output::Node root;
    auto& rows = root.section("settings", "Settings", true);
    for (const auto& s : report.settings) {
      auto& n = rows.section("setting", "");
      n.add("gpu", "", output::integer(s.gpu));
      n.add("uuid", "", output::text(s.uuid));
      n.add("setting", "", output::text(std::string(control::key_of(s.setting))));
      n.add("before", "", output::text(s.before));
      n.add("target", "", output::text(s.target));
      n.add("read_back", "", s.read_back.empty() ? output::na() : output::text(s.read_back));
      n.add("result", "", output::text(std::string(control::to_string(s.outcome))));
      n.add("error", "", s.error.empty() ? output::na() : output::text(s.error));
    }
    auto& notes = root.section("notes", "Notes", true);
    for (const auto& note : report.notes) notes.add("note", "", output::text(note));
    root.add("summary", "", line.empty() ? output::na() : output::text(line));
    root.add("journal", "", output::text(journal_file));
    root.add("exit_code", "", output::integer(static_cast<int>(report.exit)));
    printer->print_tree(root);
  } else {
    if (!report.settings.empty()) printer->print_table(report_table(report));
    if (format.kind == output::Format::Kind::table) {
      for (const auto& note : report.notes) std::cout << "note: " << note << '\n';
      if (!line.empty()) std::cout << line << '\n';
    }
  }
  std::cout.flush();
  if (report.exit != ExitCode::ok) throw Error(report.exit, report.error, report.hint);
  return 0;
}

const serve::Hello* delegating_service(Context& ctx) {
  if (::geteuid() == 0) return nullptr;
  const auto* hello = ctx.service_hello();
  if (!hello || !hello->delegation) return nullptr;
  return hello;
}

std::unique_ptr<control::SettingsWriter> settings_writer(Context& ctx, const std::string& command,
                                                         control::WriterOptions options) {
  (void)control::allow_writes(ctx.read_only(), command);
  if (delegating_service(ctx)) {
    return serve::delegated_settings_writer(*ctx.service(), options);
  }
  return control::direct_settings_writer(
      [&ctx](const std::string& name) { return session_options(ctx, name); }, command, options);
}

std::optional<int> run_delegated(Context& ctx, std::optional<serve::SetRequest> set,
                                 const std::string& nothing_to_do, bool dry_run) {
  const auto* hello = delegating_service(ctx);
  if (!hello) return std::nullopt;
  if (!dry_run) control::allow_writes(ctx.read_only(), set ? "set" : "restore");
  // With -i's GPUs; every GPU the policy grants without -i.
  std::optional<std::vector<unsigned>> gpus;
  if (ctx.selection_given()) gpus = ctx.indexes_from(hello->gpus);
  auto& service = *ctx.service();
  serve::ChangeAnswer answer;
  if (set) {
    set->gpus = gpus;
    answer = service.set(*set);
  } else {
    answer = service.restore(gpus);
  }
  const auto& report = answer.report;
  if (ctx.format().kind == output::Format::Kind::table && report.any_change() && set) {
    std::cerr << fmt::format(
        "gpuclk: set by the service (rule '{}' of {}); put back when {}, or by `gpuclk "
        "restore`\n",
        answer.rule, hello->delegation.value_or(std::string()),
        answer.held_until.value_or(
            fmt::format("this session (leader pid {}) ends", answer.session)));
  }
  return print_change_report(ctx, report, answer.journal, nothing_to_do, dry_run);
}

int run_change(Context& ctx, control::ControlSession& session,
               const std::vector<DeviceRequest>& requests, bool snap,
               const std::string& nothing_to_do) {
  std::vector<gpu::Device*> devices;
  devices.reserve(requests.size());
  for (const auto& r : requests) devices.push_back(r.device);
  auto gpus = session.open(devices);
  std::vector<control::GpuCheck> checks;
  for (std::size_t i = 0; i < requests.size(); ++i)
    checks.push_back({requests[i].request, gpus[i]->facts()});
  const auto checked = control::validate_all(checks, snap);
  std::vector<control::GpuChange> changes;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!checked.targets[i].empty()) changes.push_back({gpus[i].get(), checked.targets[i]});
  }
  auto report =
      control::apply_changes(changes, session.journal(), session.persist(), session.options());
  report.notes.insert(report.notes.begin(), checked.notes.begin(), checked.notes.end());
  return finish(ctx, session, report, nothing_to_do);
}

}  // namespace gpuclk::cli
