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

ChangeReport apply_changes(const std::vector<GpuChange>& changes, Journal& journal,
                           const PersistJournal& persist, const RunOptions& options) {
  ChangeReport report;
  std::vector<Plan> plans;
  std::size_t total = 0;
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
        row.read_back = row.before;
      } else {
        row.outcome = options.dry_run ? Outcome::would_change : Outcome::not_attempted;
        p.writes.push_back({s, report.settings.size()});
        ++total;
      }
      report.settings.push_back(std::move(row));
    }
    plans.push_back(std::move(p));
  }
  if (total == 0 || options.dry_run) return report;

  // Journal first: every setting this run may write, with each GPU's original state, is on
  // disk before the first write. A crash at any later point leaves enough to undo it.
  const Journal before_run = journal;
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

  WriteSequence sequence;
  std::optional<Failure> failure;
  std::size_t done = 0;
  for (std::size_t i = 0; i < plans.size() && !failure; ++i) {
    auto& p = plans[i];
    for (const auto& w : p.writes) {
      if (options.interrupted && options.interrupted()) {
        failure =
            Failure{i, w.setting, ExitCode::other, "interrupted by a signal before this write", {}};
        break;
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
        break;
      }
      sequence.record({i, p.gpu, w.setting, undo_value(p, w.setting, journal)});
      report.settings[w.row].outcome = Outcome::changed;
      if (options.after_write) options.after_write(++done);
    }
  }

  if (!failure) {
    sequence.commit();
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
    persist(journal);
    return report;
  }

  // A write failed (or a signal arrived): undo this run's writes, newest first.
  const auto& f = *failure;
  const auto undone = sequence.rollback();
  std::map<std::size_t, std::vector<const WriteSequence::Undone*>> stuck;  // plan → failed undos
  for (const auto& u : undone) {
    auto& p = plans[u.write.change];
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

  // GPUs back as they were get their journal entry back as it was; the others keep every
  // setting listed (restore will retry) with what is in force now.
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
    for (const auto& w : p.writes) entry->pending.clear(w.setting);
    for (const auto& u : undone) {
      if (u.write.change != i) continue;
      if (u.ok)
        entry->applied.copy_from(u.write.undo, u.write.setting);
      else
        entry->applied.copy_from(p.target, u.write.setting);
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
    return report;
  }

  report.exit = ExitCode::partial;
  report.error = what +
                 "; rolling back the GPUs already changed failed, so they are now in "
                 "different states:";
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    const auto index = p.gpu->facts().index;
    if (stuck.count(i)) {
      std::vector<std::string> parts;
      for (const auto* u : stuck[i]) {
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
  return report;
}

}  // namespace gpuclk::control
