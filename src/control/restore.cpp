#include "control/restore.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <set>

namespace gpuclk::control {
namespace {

struct GpuResult {
  unsigned index = 0;
  bool restored = false;
  ExitCode code = ExitCode::ok;
  std::string problem;

  // The first failure on a GPU is the one its line of the error names. False when it had one.
  bool fail(ExitCode c, const std::string& why) {
    if (code != ExitCode::ok) return false;
    code = c;
    problem = why;
    return true;
  }
};

// A GPU written to in the first pass, to be read back in the second.
struct Written {
  const JournalEntry* entry = nullptr;
  GpuControl* gpu = nullptr;
  std::size_t result = 0;         // in `results`
  std::vector<std::size_t> rows;  // its rows of the report
  std::set<Setting> failed;
};

HistoryRecord history(const JournalEntry& e, Setting s, std::string from, std::string to,
                      std::string outcome) {
  return {utc_now(),
          static_cast<long>(::getpid()),
          "restore",
          e.index,
          e.uuid,
          std::string(key_of(s)),
          std::move(from),
          std::move(to),
          std::move(outcome)};
}

// One restore, phase by phase (restore() calls them in order): each journaled GPU's original
// settings written back, read back once they settle, the journal trimmed to what is left, and
// the report's error naming which GPU is in which state.
class Restore {
 public:
  Restore(Journal& journal, const PersistJournal& persist, const RunOptions& options)
      : journal_(journal), persist_(persist), options_(options) {}

  // Phase 1, write back: `entry`'s touched settings to their originals on `gpu` (nullptr: not
  // present), in reverse write order: power and locks first, persistence mode last.
  void write_back(const JournalEntry& entry, GpuControl* gpu) {
    GpuResult result{entry.index};
    if (!gpu) {
      not_present(entry, result);
      return;
    }
    result.index = gpu->facts().index;
    const auto now = known_settings(*gpu, journal_);
    Written w{&entry, gpu, results_.size(), {}, {}};
    for (auto s_it = kWriteOrder.rbegin(); s_it != kWriteOrder.rend(); ++s_it) {
      const Setting s = *s_it;
      if (!entry.touched.count(s)) continue;
      SettingReport row{
          result.index, entry.uuid,         s, describe(now, s), describe(entry.original, s),
          {},           Outcome::unchanged, {}};
      if (now.same(entry.original, s)) {
        if (!options_.dry_run) row.read_back = row.before;  // a dry run reads nothing back
      } else if (options_.dry_run) {
        row.outcome = Outcome::would_change;
      } else {
        write_one(entry, *gpu, row, result, w.failed);
      }
      w.rows.push_back(report_.settings.size());
      report_.settings.push_back(std::move(row));
    }
    if (!options_.dry_run) written_.push_back(std::move(w));
    results_.push_back(result);
  }

  // Phase 2, read back: once the writes took effect (one wait for all GPUs), what NVML can read;
  // a value that did not take counts as a failure to restore. Each GPU's journal entry then
  // leaves (all back) or keeps just what failed, saved GPU by GPU.
  void read_back() {
    const bool any_write = std::any_of(written_.begin(), written_.end(),
                                       [](const Written& w) { return !w.rows.empty(); });
    if (options_.settle && any_write) options_.settle();
    // A journal that cannot be saved (a full disk) does not stop the restore: the GPUs are put
    // back all the same, and the report says they are while the journal on disk still lists
    // them.
    std::string save_error;
    std::vector<unsigned> unsaved;
    for (auto& w : written_) {
      check_read_back(w);
      trim_journal(w);
      try {
        persist_(journal_);
      } catch (const std::exception& e) {
        if (save_error.empty()) save_error = e.what();
        unsaved.push_back(results_[w.result].index);
      }
    }
    if (!save_error.empty()) {
      // What the GPUs are is what the table says (read back above); what is stale is the journal.
      report_.error = fmt::format(
          "the journal could not be saved ({}): it still lists GPU {} as set by gpuclk although "
          "the table above is what they read now",
          save_error, fmt::join(unsaved, ", "));
      report_.hint =
          "free space in the state directory, then run `gpuclk restore` again: it finds "
          "those GPUs already as they were and clears the journal";
      if (report_.exit == ExitCode::ok) report_.exit = ExitCode::other;
    }
  }

  // Phase 3, explain: where a GPU is not back, the exit code (partial where some are, or the
  // failures differ) and the error naming each GPU's state.
  ChangeReport explain() {
    std::vector<const GpuResult*> bad;
    for (const auto& r : results_) {
      if (!r.restored && r.code != ExitCode::ok) bad.push_back(&r);
    }
    if (bad.empty()) return std::move(report_);
    const std::string unsaved_note = report_.error;
    const bool some_restored =
        std::any_of(results_.begin(), results_.end(), [](const auto& r) { return r.restored; });
    const bool same_code =
        std::all_of(bad.begin(), bad.end(), [&](auto* r) { return r->code == bad[0]->code; });
    report_.exit = some_restored || !same_code ? ExitCode::partial : bad[0]->code;
    report_.error = some_restored ? "restore left GPUs in different states:" : "restore failed:";
    for (const auto& r : results_) {
      report_.error += r.restored
                           ? fmt::format("\n  GPU {}: restored to its original state", r.index)
                           : fmt::format("\n  GPU {}: not restored: {}", r.index, r.problem);
    }
    if (!unsaved_note.empty()) report_.error += "\n" + unsaved_note;
    if (report_.hint.empty()) {
      report_.hint =
          "the journal keeps what is left to restore; fix the cause and run `gpuclk restore` "
          "again";
    }
    return std::move(report_);
  }

 private:
  // A journaled GPU that is not here: its rows fail, its entry stays.
  void not_present(const JournalEntry& entry, GpuResult& result) {
    result.code = ExitCode::gpu_not_found;
    result.problem = fmt::format("GPU {} ({}) is not present; its entry stays in the journal",
                                 entry.index, entry.uuid);
    for (auto s : entry.touched) {
      report_.settings.push_back({entry.index, entry.uuid, s, describe(entry.applied, s),
                                  describe(entry.original, s), "N/A", Outcome::failed,
                                  "GPU not present"});
    }
    results_.push_back(result);
  }

  // One setting back to its original (unless a signal asked to stop first), into the history.
  void write_one(const JournalEntry& entry, GpuControl& gpu, SettingReport& row, GpuResult& result,
                 std::set<Setting>& failed) {
    const Setting s = row.setting;
    if (options_.interrupted && options_.interrupted()) {
      row.outcome = Outcome::not_attempted;
      row.error = "interrupted by a signal";
      failed.insert(s);
      result.fail(ExitCode::other, "interrupted by a signal");
      return;
    }
    try {
      write_setting(gpu, s, entry.original);
      row.outcome = Outcome::changed;
    } catch (const Error& e) {
      row.outcome = Outcome::failed;
      row.error = e.what();
      if (result.fail(e.code(), e.what())) report_.hint = e.hint();
    } catch (const std::exception& e) {
      row.outcome = Outcome::failed;
      row.error = e.what();
      result.fail(ExitCode::other, e.what());
    }
    if (row.outcome == Outcome::failed) failed.insert(s);
    journal_.add_history(history(entry, s, row.before, row.target,
                                 row.outcome == Outcome::changed ? "ok" : row.error));
    if (row.outcome == Outcome::changed && options_.after_write)
      options_.after_write(report_.count(Outcome::changed) + 1);
  }

  // The rows `w` changed, as the GPU reads them now.
  void check_read_back(Written& w) {
    const JournalEntry& entry = *w.entry;
    GpuResult& result = results_[w.result];
    const auto after = w.gpu->read_settings();
    const auto live = w.gpu->live_clocks();
    for (auto r : w.rows) {
      auto& row = report_.settings[r];
      if (row.outcome != Outcome::changed) continue;
      if (!after.has(row.setting)) {
        row.read_back = live_text(live, row.setting);
        continue;
      }
      row.read_back = describe(after, row.setting);
      if (!after.same(entry.original, row.setting)) {
        row.outcome = Outcome::failed;
        row.error = fmt::format("reads {} after restoring {}", row.read_back, row.target);
        w.failed.insert(row.setting);
        result.fail(ExitCode::other, row.error);
      }
    }
  }

  // All back: the entry leaves the journal. Else it keeps only what is still to do, so the next
  // restore retries exactly that.
  void trim_journal(const Written& w) {
    const JournalEntry& entry = *w.entry;
    if (w.failed.empty()) {
      journal_.remove(entry.uuid);
      results_[w.result].restored = true;
      return;
    }
    auto* current = journal_.find(entry.uuid);
    for (auto s : kWriteOrder) {
      if (entry.touched.count(s) && !w.failed.count(s)) {
        current->touched.erase(s);
        current->applied.clear(s);
        current->pending.clear(s);
      }
    }
  }

  Journal& journal_;
  const PersistJournal& persist_;
  const RunOptions& options_;
  ChangeReport report_;
  std::vector<GpuResult> results_;
  std::vector<Written> written_;
};

}  // namespace

ChangeReport restore(const std::vector<GpuControl*>& gpus, Journal& journal,
                     const PersistJournal& persist, const RunOptions& options,
                     const std::vector<std::string>& only) {
  Restore run(journal, persist, options);
  const auto entries = journal.gpus;  // the phases edit the journal
  for (const auto& entry : entries) {
    if (!only.empty() && std::find(only.begin(), only.end(), entry.uuid) == only.end()) continue;
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](auto* g) { return g->facts().uuid == entry.uuid; });
    run.write_back(entry, it == gpus.end() ? nullptr : *it);
  }
  run.read_back();
  return run.explain();
}

}  // namespace gpuclk::control
