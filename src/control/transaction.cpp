#include "control/transaction.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>

#include "control/write_sequence.h"

namespace gpuclk::control {
namespace {

struct PlannedWrite {
  Setting setting;
  std::size_t row;  // in the report
};

struct Plan {
  GpuControl* gpu = nullptr;
  Settings target;
  Settings before;  // known_settings() before the run
  std::vector<PlannedWrite> writes;
};

struct Failure {
  std::size_t plan = 0;
  Setting setting = Setting::persistence_mode;
  ExitCode code = ExitCode::other;
  std::string message;
  std::string hint;
};

HistoryRecord history(const std::string& command, const Plan& p, Setting s, std::string from,
                      std::string to, std::string outcome) {
  return {utc_now(),           static_cast<long>(::getpid()), command,         p.gpu->facts().index,
          p.gpu->facts().uuid, std::string(key_of(s)),        std::move(from), std::move(to),
          std::move(outcome)};
}

// The value that undoes writing `s`: what the GPU had, or its journaled original where the run
// could not know (a lock gpuclk never recorded is assumed unlocked, as the journal says).
Settings undo_value(const Plan& p, Setting s, const Journal& journal) {
  Settings undo;
  if (p.before.has(s))
    undo.copy_from(p.before, s);
  else if (const auto* e = journal.find(p.gpu->facts().uuid))
    undo.copy_from(e->original, s);
  return undo;
}

std::string failure_text(const Plan& p, Setting s, const std::string& error) {
  return fmt::format("GPU {}: setting {} to {} failed: {}", p.gpu->facts().index, label_of(s),
                     describe(p.target, s), error);
}

}  // namespace

Settings known_settings(GpuControl& gpu, const Journal& journal) {
  Settings s = gpu.read_settings();
  if (const auto* e = journal.find(gpu.facts().uuid)) {
    for (auto lock : {Setting::locked_gpu_clocks, Setting::locked_memory_clocks}) {
      if (e->applied.has(lock) && !e->pending.has(lock)) s.copy_from(e->applied, lock);
    }
  }
  return s;
}

std::string live_text(const LiveClocks& live, Setting s) {
  if (s == Setting::locked_memory_clocks) {
    return live.memory ? fmt::format("memory {:.0f} MHz now", live.memory->value()) : "N/A";
  }
  return live.sm ? fmt::format("SM {:.0f} MHz now", live.sm->value()) : "N/A";
}

namespace {

// Phase 1, plan: a report row for every requested setting; a planned write for each that differs
// from what the GPU has now (as far as gpuclk can know, known_settings()).
std::vector<Plan> plan_writes(const std::vector<GpuChange>& changes, const Journal& journal,
                              bool dry_run, ChangeReport& report) {
  std::vector<Plan> plans;
  for (const auto& c : changes) {
    Plan p{c.gpu, c.target, known_settings(*c.gpu, journal), {}};
    for (auto s : kWriteOrder) {
      if (!c.target.has(s)) continue;
      SettingReport row{c.gpu->facts().index,
                        c.gpu->facts().uuid,
                        s,
                        describe(p.before, s),
                        describe(c.target, s),
                        {},
                        Outcome::unchanged,
                        {}};
      if (p.before.same(c.target, s)) {
        // Unchanged: what was read before is what the GPU has. A dry run reads nothing back.
        if (!dry_run) row.read_back = row.before;
      } else {
        row.outcome = dry_run ? Outcome::would_change : Outcome::not_attempted;
        p.writes.push_back({s, report.settings.size()});
      }
      report.settings.push_back(std::move(row));
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

// Phase 2, journal: every setting this run may write, with each GPU's original state, is on
// disk before the first write. A crash at any later point leaves enough to undo it.
void journal_planned(const std::vector<Plan>& plans, Journal& journal,
                     const PersistJournal& persist) {
  const auto now = utc_now();
  for (const auto& p : plans) {
    if (p.writes.empty()) continue;
    auto& entry = journal.entry_for(p.gpu->facts(), p.before, now);
    entry.last_change = now;
    for (const auto& w : p.writes) {
      entry.touched.insert(w.setting);
      entry.pending.copy_from(p.target, w.setting);
    }
  }
  persist(journal);
}

// Phase 3, write: GPU by GPU in kWriteOrder, each write recorded with its undo value. Stops at
// the first failure or when a signal asked to; returns that failure.
std::optional<Failure> write_planned(std::vector<Plan>& plans, const Journal& journal,
                                     const RunOptions& options, WriteSequence& sequence,
                                     ChangeReport& report) {
  std::size_t done = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    auto& p = plans[i];
    for (const auto& w : p.writes) {
      std::optional<Failure> failure;
      if (options.interrupted && options.interrupted()) {
        return Failure{
            i, w.setting, ExitCode::other, "interrupted by a signal before this write", {}};
      }
      try {
        write_setting(*p.gpu, w.setting, p.target);
      } catch (const Error& e) {
        failure = Failure{i, w.setting, e.code(), e.what(), e.hint()};
      } catch (const std::exception& e) {
        failure = Failure{i, w.setting, ExitCode::other, e.what(), {}};
      }
      if (failure) {
        report.settings[w.row].outcome = Outcome::failed;
        report.settings[w.row].error = failure->message;
        return failure;
      }
      sequence.record({i, p.gpu, w.setting, undo_value(p, w.setting, journal)});
      report.settings[w.row].outcome = Outcome::changed;
      if (options.after_write) options.after_write(++done);
    }
  }
  return std::nullopt;
}

// Phase 4, read back: after the writes settle, what each GPU reads now goes into the report
// (with a note where it differs from the target) and the journal records the writes as applied.
void read_back(std::vector<Plan>& plans, Journal& journal, const RunOptions& options,
               const PersistJournal& persist, ChangeReport& report) {
  if (options.settle) options.settle();
  for (auto& p : plans) {
    if (p.writes.empty()) continue;
    const auto after = p.gpu->read_settings();
    const auto live = p.gpu->live_clocks();
    auto* entry = journal.find(p.gpu->facts().uuid);
    for (const auto& w : p.writes) {
      auto& row = report.settings[w.row];
      entry->applied.copy_from(p.target, w.setting);
      entry->pending.clear(w.setting);
      if (after.has(w.setting)) {
        row.read_back = describe(after, w.setting);
        if (!after.same(p.target, w.setting)) {
          report.notes.push_back(fmt::format("GPU {}: {} reads {} after writing {}", row.gpu,
                                             label_of(w.setting), row.read_back, row.target));
        }
      } else {
        row.read_back = live_text(live, w.setting);
      }
      journal.add_history(history(options.command, p, w.setting, row.before, row.target, "ok"));
    }
  }
  // The writes are made and read back. A journal that cannot be saved now (a full disk) keeps
  // the version saved before the first write, which lists each of them with the GPU's original
  // state (as pending): `gpuclk restore` still undoes them. The settings stay; the report says so.
  try {
    persist(journal);
  } catch (const std::exception& e) {
    report.notes.push_back(fmt::format(
        "the journal could not be updated after the writes ({}); its saved version lists every "
        "setting above with the GPU's original state, so `gpuclk restore` still undoes them",
        e.what()));
  }
}

// The undos that failed, by plan.
using Stuck = std::map<std::size_t, std::vector<const WriteSequence::Undone*>>;

// Phase 5, roll back: undo this run's writes, newest first; mark the report rows and the history.
Stuck roll_back(const std::vector<Plan>& plans, const Failure& f,
                const std::vector<WriteSequence::Undone>& undone, Journal& journal,
                const RunOptions& options, ChangeReport& report) {
  Stuck stuck;
  for (const auto& u : undone) {
    const auto& p = plans[u.write.change];
    for (const auto& w : p.writes) {
      if (w.setting != u.write.setting) continue;
      auto& row = report.settings[w.row];
      row.outcome = u.ok ? Outcome::rolled_back : Outcome::rollback_failed;
      row.read_back = u.ok ? describe(u.write.undo, w.setting) : row.target;
      if (!u.ok) row.error = u.error;
    }
    if (!u.ok) stuck[u.write.change].push_back(&u);
    journal.add_history(history(options.command + " (rollback)", p, u.write.setting,
                                describe(p.target, u.write.setting),
                                describe(u.write.undo, u.write.setting), u.ok ? "ok" : u.error));
  }
  journal.add_history(history(options.command, plans[f.plan], f.setting,
                              describe(plans[f.plan].before, f.setting),
                              describe(plans[f.plan].target, f.setting), f.message));
  return stuck;
}

// After a rollback: GPUs back as they were get their journal entry back as it was; the others
// keep every setting listed (restore will retry) with what is in force now.
void journal_after_rollback(const std::vector<Plan>& plans, const Stuck& stuck,
                            const std::vector<WriteSequence::Undone>& undone,
                            const Journal& before_run, Journal& journal,
                            const PersistJournal& persist, ChangeReport& report) {
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (p.writes.empty()) continue;
    const auto& uuid = p.gpu->facts().uuid;
    if (!stuck.count(i)) {
      journal.remove(uuid);
      if (const auto* old = before_run.find(uuid)) {
        journal.gpus.push_back(*old);
        std::sort(journal.gpus.begin(), journal.gpus.end(),
                  [](const auto& a, const auto& b) { return a.index < b.index; });
      }
      continue;
    }
    auto* entry = journal.find(uuid);
    const auto* old = before_run.find(uuid);
    for (const auto& w : p.writes) entry->pending.clear(w.setting);
    for (const auto& u : undone) {
      if (u.write.change != i) continue;
      const Setting s = u.write.setting;
      if (!u.ok) {
        entry->applied.copy_from(p.target, s);
        continue;
      }
      // Undone: the setting is as before this run, and so is what the journal says of it (a
      // rolled-back write listed as "applied" would claim gpuclk holds a value it gave back).
      entry->applied.clear(s);
      if (old && old->touched.count(s)) {
        if (old->applied.has(s)) entry->applied.copy_from(old->applied, s);
      } else {
        entry->touched.erase(s);
      }
    }
  }
  try {
    persist(journal);
  } catch (const std::exception& e) {
    report.notes.push_back(std::string("the journal could not be updated after the rollback (") +
                           e.what() +
                           "); its saved version lists every setting this run touched, so `gpuclk "
                           "restore` still works");
  }
}

// The report's error after a rollback: the failure, and which GPU is in which state.
void explain_failure(const std::vector<Plan>& plans, const Failure& f, const Stuck& stuck,
                     const WriteSequence& sequence, ChangeReport& report) {
  std::string what = failure_text(plans[f.plan], f.setting, f.message);
  report.hint = f.hint;
  if (f.setting == Setting::locked_memory_clocks && f.code == ExitCode::not_supported) {
    report.hint = "choose the memory clock with application clocks instead: --app-clocks MEM,GFX";
  }
  if (stuck.empty()) {
    report.exit = f.code;
    if (sequence.writes().empty()) {
      report.error = what + "; nothing was changed";
    } else {
      std::vector<unsigned> gpus;
      for (const auto& w : sequence.writes()) {
        auto g = plans[w.change].gpu->facts().index;
        if (gpus.empty() || gpus.back() != g) gpus.push_back(g);
      }
      report.error = fmt::format(
          "{}; rolled back {} setting(s) already changed on GPU {}: every GPU "
          "is as before",
          what, sequence.writes().size(), fmt::join(gpus, ", "));
    }
    return;
  }

  report.exit = ExitCode::partial;
  report.error = what +
                 "; rolling back the GPUs already changed failed, so they are now in "
                 "different states:";
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    const auto index = p.gpu->facts().index;
    if (const auto it = stuck.find(i); it != stuck.end()) {
      std::vector<std::string> parts;
      for (const auto* u : it->second) {
        parts.push_back(fmt::format("{} still {} (undo failed: {})", label_of(u->write.setting),
                                    describe(p.target, u->write.setting), u->error));
      }
      report.error += fmt::format("\n  GPU {}: {}", index, fmt::join(parts, "; "));
    } else if (std::any_of(sequence.writes().begin(), sequence.writes().end(),
                           [&](const auto& w) { return w.change == i; })) {
      report.error += fmt::format("\n  GPU {}: as before (rolled back)", index);
    } else if (i == f.plan) {
      report.error += fmt::format("\n  GPU {}: unchanged (its write failed)", index);
    } else if (!p.writes.empty()) {
      report.error += fmt::format("\n  GPU {}: unchanged (not attempted)", index);
    }
  }
  report.hint =
      "`gpuclk restore` retries returning every GPU gpuclk changed to its original state; "
      "`gpuclk journal` shows what is recorded";
}

}  // namespace

ChangeReport apply_changes(const std::vector<GpuChange>& changes, Journal& journal,
                           const PersistJournal& persist, const RunOptions& options) {
  ChangeReport report;
  auto plans = plan_writes(changes, journal, options.dry_run, report);
  const bool any_write =
      std::any_of(plans.begin(), plans.end(), [](const Plan& p) { return !p.writes.empty(); });
  if (!any_write || options.dry_run) return report;

  const Journal before_run = journal;
  journal_planned(plans, journal, persist);

  WriteSequence sequence;
  const auto failure = write_planned(plans, journal, options, sequence, report);
  if (!failure) {
    sequence.commit();
    read_back(plans, journal, options, persist, report);
    return report;
  }

  const auto undone = sequence.rollback();
  const auto stuck = roll_back(plans, *failure, undone, journal, options, report);
  journal_after_rollback(plans, stuck, undone, before_run, journal, persist, report);
  explain_failure(plans, *failure, stuck, sequence, report);
  return report;
}

}  // namespace gpuclk::control
