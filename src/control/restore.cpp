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

}  // namespace

ChangeReport restore(const std::vector<GpuControl*>& gpus, Journal& journal,
                     const PersistJournal& persist, const RunOptions& options,
                     const std::vector<std::string>& only) {
  ChangeReport report;
  std::vector<GpuResult> results;
  std::vector<Written> written;
  const auto entries = journal.gpus;  // the loops edit the journal
  // First pass: write every GPU's original settings back.
  for (const auto& entry : entries) {
    if (!only.empty() && std::find(only.begin(), only.end(), entry.uuid) == only.end()) continue;
    GpuResult result{entry.index};
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](auto* g) { return g->facts().uuid == entry.uuid; });
    if (it == gpus.end()) {
      result.code = ExitCode::gpu_not_found;
      result.problem = fmt::format("GPU {} ({}) is not present; its entry stays in the journal",
                                   entry.index, entry.uuid);
      for (auto s : entry.touched) {
        report.settings.push_back({entry.index, entry.uuid, s, describe(entry.applied, s),
                                   describe(entry.original, s), "N/A", Outcome::failed,
                                   "GPU not present"});
      }
      results.push_back(result);
      continue;
    }
    GpuControl& gpu = **it;
    result.index = gpu.facts().index;
    const auto now = known_settings(gpu, journal);
    std::vector<std::size_t> rows;
    std::set<Setting> failed;
    // Reverse write order: power and locks first, persistence mode last.
    for (auto s_it = kWriteOrder.rbegin(); s_it != kWriteOrder.rend(); ++s_it) {
      const Setting s = *s_it;
      if (!entry.touched.count(s)) continue;
      SettingReport row{
          result.index, entry.uuid,         s, describe(now, s), describe(entry.original, s),
          {},           Outcome::unchanged, {}};
      if (now.same(entry.original, s)) {
        if (!options.dry_run) row.read_back = row.before;  // a dry run reads nothing back
      } else if (options.dry_run) {
        row.outcome = Outcome::would_change;
      } else {
        if (options.interrupted && options.interrupted()) {
          row.outcome = Outcome::not_attempted;
          row.error = "interrupted by a signal";
          failed.insert(s);
          if (result.code == ExitCode::ok) {
            result.code = ExitCode::other;
            result.problem = "interrupted by a signal";
          }
        } else {
          try {
            write_setting(gpu, s, entry.original);
            row.outcome = Outcome::changed;
          } catch (const Error& e) {
            row.outcome = Outcome::failed;
            row.error = e.what();
            if (result.code == ExitCode::ok) {
              result.code = e.code();
              result.problem = e.what();
              report.hint = e.hint();
            }
          } catch (const std::exception& e) {
            row.outcome = Outcome::failed;
            row.error = e.what();
            if (result.code == ExitCode::ok) {
              result.code = ExitCode::other;
              result.problem = e.what();
            }
          }
          if (row.outcome == Outcome::failed) failed.insert(s);
          journal.add_history(history(entry, s, row.before, row.target,
                                      row.outcome == Outcome::changed ? "ok" : row.error));
          if (row.outcome == Outcome::changed && options.after_write)
            options.after_write(report.count(Outcome::changed) + 1);
        }
      }
      rows.push_back(report.settings.size());
      report.settings.push_back(std::move(row));
    }
    if (!options.dry_run) written.push_back({&entry, &gpu, results.size(), rows, failed});
    results.push_back(result);
  }

  // Second pass: once the writes took effect (one wait for all GPUs), read back what NVML can;
  // a value that did not take counts as a failure to restore.
  const bool any_write =
      std::any_of(written.begin(), written.end(), [](const Written& w) { return !w.rows.empty(); });
  if (options.settle && any_write) options.settle();
  // A journal that cannot be saved (a full disk) does not stop the restore: the GPUs are put
  // back all the same, and the report says they are while the journal on disk still lists them.
  std::string save_error;
  std::vector<unsigned> unsaved;
  for (auto& w : written) {
    const JournalEntry& entry = *w.entry;
    GpuResult& result = results[w.result];
    auto& failed = w.failed;
    const auto after = w.gpu->read_settings();
    const auto live = w.gpu->live_clocks();
    for (auto r : w.rows) {
      auto& row = report.settings[r];
      if (row.outcome != Outcome::changed) continue;
      if (after.has(row.setting)) {
        row.read_back = describe(after, row.setting);
        if (!after.same(entry.original, row.setting)) {
          row.outcome = Outcome::failed;
          row.error = fmt::format("reads {} after restoring {}", row.read_back, row.target);
          failed.insert(row.setting);
          if (result.code == ExitCode::ok) {
            result.code = ExitCode::other;
            result.problem = row.error;
          }
        }
      } else {
        row.read_back = live_text(live, row.setting);
      }
    }
    auto* current = journal.find(entry.uuid);
    if (failed.empty()) {
      journal.remove(entry.uuid);
      result.restored = true;
    } else {
      // Keep only what is still to do, so the next restore retries exactly that.
      for (auto s : kWriteOrder) {
        if (entry.touched.count(s) && !failed.count(s)) {
          current->touched.erase(s);
          current->applied.clear(s);
          current->pending.clear(s);
        }
      }
    }
    try {
      persist(journal);
    } catch (const std::exception& e) {
      if (save_error.empty()) save_error = e.what();
      unsaved.push_back(result.index);
    }
  }
  if (!save_error.empty()) {
    // What the GPUs are is what the table says (read back above); what is stale is the journal.
    report.error = fmt::format(
        "the journal could not be saved ({}): it still lists GPU {} as set by gpuclk although the "
        "table above is what they read now",
        save_error, fmt::join(unsaved, ", "));
    report.hint =
        "free space in the state directory, then run `gpuclk restore` again: it finds "
        "those GPUs already as they were and clears the journal";
    if (report.exit == ExitCode::ok) report.exit = ExitCode::other;
  }

  std::vector<const GpuResult*> bad;
  for (const auto& r : results) {
    if (!r.restored && r.code != ExitCode::ok) bad.push_back(&r);
  }
  if (bad.empty()) return report;
  const std::string unsaved_note = report.error;
  const bool some_restored =
      std::any_of(results.begin(), results.end(), [](const auto& r) { return r.restored; });
  const bool same_code =
      std::all_of(bad.begin(), bad.end(), [&](auto* r) { return r->code == bad[0]->code; });
  report.exit = some_restored || !same_code ? ExitCode::partial : bad[0]->code;
  report.error = some_restored ? "restore left GPUs in different states:" : "restore failed:";
  for (const auto& r : results) {
    report.error += r.restored ? fmt::format("\n  GPU {}: restored to its original state", r.index)
                               : fmt::format("\n  GPU {}: not restored: {}", r.index, r.problem);
  }
  if (!unsaved_note.empty()) report.error += "\n" + unsaved_note;
  if (report.hint.empty()) {
    report.hint =
        "the journal keeps what is left to restore; fix the cause and run `gpuclk restore` again";
  }
  return report;
}

}  // namespace gpuclk::control
