// `gpuclk restore`: every GPU gpuclk changed back to its state before the first change, from
// the journal. `gpuclk journal`: what the journal records.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/restore.h"

namespace gpuclk::cli {
namespace {

struct RestoreOptions {
  bool dry_run = false;
};

struct JournalOptions {
  bool history = false;
};

int run_restore(Context& ctx, const RestoreOptions& o) {
  // Not root: put back what this user holds through the service (docs/serve.md).
  if (!o.dry_run) {
    if (auto rc = run_delegated(ctx, std::nullopt,
                                "nothing to restore: you hold no GPU settings through the service",
                                false))
      return *rc;
  }
  control::ControlSession session(session_options(ctx, "restore", o.dry_run), o.dry_run);
  std::vector<std::string> only;
  if (ctx.selection_given()) {
    for (auto* d : ctx.selected()) only.push_back(d->uuid());
  }
  if (session.journal().clean()) {
    control::ChangeReport empty;
    return finish(ctx, session, empty,
                  fmt::format("nothing to restore: the journal lists no GPU changed by gpuclk ({})",
                              session.store().file().string()));
  }
  auto gpus = session.open(ctx.devices().all());
  std::vector<control::GpuControl*> present;
  present.reserve(gpus.size());
  for (auto& g : gpus) present.push_back(g.get());
  auto report =
      control::restore(present, session.journal(), session.persist(), session.options(), only);
  return finish(ctx, session, report,
                "nothing to restore: every GPU already has its original settings");
}

std::string state_of(const control::JournalEntry& e, control::Setting s) {
  if (e.pending.has(s)) return "interrupted while setting " + control::describe(e.pending, s);
  if (e.applied.has(s)) return "applied";
  return "touched";
}

int run_journal(Context& ctx, const JournalOptions& o) {
  const auto dir = journal_dir(ctx);
  control::JournalStore store(dir);
  const auto journal = store.load();
  const auto format = ctx.format();
  if (format.kind == output::Format::Kind::json) {
    std::cout << control::to_json(journal);
    return 0;
  }
  output::Table t;
  t.columns = {{"gpu", "GPU"},
               {"uuid", "UUID", true},
               {"setting", "Setting", true},
               {"original", "Original", true},
               {"applied", "Set by gpuclk", true},
               {"state", "State", true},
               {"last_change", "Changed", true}};
  for (const auto& e : journal.gpus) {
    for (auto s : control::kWriteOrder) {
      if (!e.touched.count(s)) continue;
      auto original = control::describe(e.original, s);
      if (e.assumed.count(s)) original += " (assumed)";
      t.rows.push_back(
          {output::integer(e.index), output::text(e.uuid),
           output::text(std::string(control::label_of(s))), output::text(original),
           e.applied.has(s) ? output::text(control::describe(e.applied, s)) : output::na(),
           output::text(state_of(e, s)), output::text(e.last_change)});
    }
  }
  auto printer = ctx.printer();
  if (!t.rows.empty()) printer->print_table(t);
  if (o.history && !journal.history.empty()) {
    output::Table h;
    h.columns = {{"time", "Time", true},       {"pid", "PID"},
                 {"command", "Command", true}, {"gpu", "GPU"},
                 {"setting", "Setting", true}, {"from", "From", true},
                 {"to", "To", true},           {"outcome", "Outcome", true}};
    for (const auto& r : journal.history) {
      h.rows.push_back({output::text(r.time), output::integer(r.pid), output::text(r.command),
                        output::integer(r.gpu), output::text(r.setting), output::text(r.from),
                        output::text(r.to), output::text(r.outcome)});
    }
    if (format.kind == output::Format::Kind::table) std::cout << "\nHistory (oldest first):\n";
    printer->print_table(h);
  }
  if (format.kind == output::Format::Kind::table) {
    if (journal.clean())
      std::cout << "no GPU changed by gpuclk is recorded (nothing to restore)\n";
    else
      std::cout << "`gpuclk restore` returns these GPUs to their original settings\n";
    std::cout << "journal: " << store.file().string() << "\n";
  }
  return 0;
}

}  // namespace

void add_restore_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RestoreOptions>();
  auto* sub = app.add_subcommand("restore",
                                 "Return every GPU gpuclk changed to its settings before the first "
                                 "change (from the journal; also after a crash)");
  sub->add_flag("--dry-run", o->dry_run, "show what would be restored; write nothing");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_restore(ctx, *o); }; });
}

void add_journal_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<JournalOptions>();
  auto* sub = app.add_subcommand("journal",
                                 "What gpuclk changed, per GPU: original and applied settings "
                                 "(--format json: the journal file itself)");
  sub->add_flag("--history", o->history, "also every write gpuclk made, oldest first");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_journal(ctx, *o); }; });
}

}  // namespace gpuclk::cli
