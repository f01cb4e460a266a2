#include "serve/delegate_writer.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "control/journal_store.h"
#include "control/restore.h"
#include "control/transaction.h"
#include "control/validate.h"
#include "util/file.h"

namespace gpuclk::serve {

namespace {

// The grants users hold through the service, beside the journal.
constexpr const char* kHoldsFile = "delegated.json";

control::SessionOptions with_command(control::SessionOptions o) {
  o.command = "set (delegated)";
  return o;
}

}  // namespace

DelegateWriter::DelegateWriter(control::SessionOptions session,
                               const std::vector<gpu::Device*>& devices)
    : session_(with_command(std::move(session))),
      controls_(session_.open(devices)),
      journal_(session_.store().file().string()) {}

DelegateBackend DelegateWriter::backend() {
  DelegateBackend b;
  b.journal = journal_;
  b.holds_file = (session_.store().dir() / kHoldsFile).string();
  b.save_holds = [this](const std::string& text) {
    session_.store().write_atomically(kHoldsFile, text);
  };
  b.load_holds = [this]() -> std::optional<std::string> {
    const auto path = session_.store().dir() / kHoldsFile;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return file::read_bounded(path.string(), "the delegated grants");
  };
  b.validate = [this](const std::vector<std::size_t>& positions, const control::Request& request,
                      bool snap) {
    std::vector<control::GpuCheck> gpus;
    for (auto pos : positions) {
      const auto& facts = controls_.at(pos)->facts();
      if (facts.unavailable_code != 0)
        throw Error(facts.lost ? ExitCode::gpu_lost : ExitCode::gpu_not_found,
                    fmt::format("GPU {} could not be opened (NVML code {})", facts.index,
                                facts.unavailable_code));
      gpus.push_back({request, facts});
    }
    auto checked = control::validate_all(gpus, snap);
    return DelegateBackend::Checked{std::move(checked.targets), std::move(checked.notes)};
  };
  b.apply = [this](const std::vector<std::size_t>& positions,
                   const std::vector<control::Settings>& targets, const std::string& command,
                   bool dry_run, bool settle) {
    DelegateBackend::Applied out;
    out.report = session_.with_journal(
        [&](control::Journal& journal, const control::PersistJournal& persist) {
          std::vector<control::GpuChange> changes;
          for (std::size_t i = 0; i < positions.size(); ++i) {
            auto& gpu = *controls_.at(positions[i]);
            const auto now = control::known_settings(gpu, journal);
            control::Settings before;
            for (auto s : control::kWriteOrder) {
              if (!targets[i].has(s)) continue;
              before.copy_from(now, s);
              // Locks NVML cannot read and the journal does not record: unlocked, as the journal
              // assumes too.
              if (!before.has(s) && s == control::Setting::locked_gpu_clocks)
                before.locked_gpu_clocks = control::ClockLock::none();
              if (!before.has(s) && s == control::Setting::locked_memory_clocks)
                before.locked_memory_clocks = control::ClockLock::none();
            }
            out.before.push_back(before);
            out.journaled.push_back(journal.find(gpu.facts().uuid) != nullptr);
            if (!targets[i].empty()) changes.push_back({&gpu, targets[i]});
          }
          auto options = session_.options();
          options.command = command;
          options.dry_run = dry_run;
          // Read back after the clocks took effect, as `gpuclk set` does (a governor's writes:
          // at once, as `gpuclk govern` reads back its own).
          if (settle) options.settle = control::settle;
          return control::apply_changes(changes, journal, persist, options);
        });
    return out;
  };
  b.put_back = [this](const std::vector<DelegateBackend::PutBack>& back,
                      const std::string& command) {
    return session_.with_journal([&](control::Journal& journal,
                                     const control::PersistJournal& persist) {
      auto options = session_.options();
      options.command = command;
      options.settle = control::settle;
      // GPUs the journal did not list before the session: restored whole, so they leave it.
      std::vector<control::GpuControl*> whole;
      std::vector<std::string> uuids;
      std::vector<control::GpuChange> changes;
      std::vector<std::string> notes;
      for (const auto& item : back) {
        auto* gpu = controls_.at(item.position).get();
        const auto& uuid = gpu->facts().uuid;
        // A setting someone else changed since the session set it is theirs now: left alone.
        const auto now = control::known_settings(*gpu, journal);
        auto target = item.settings;
        for (auto s : control::kWriteOrder) {
          if (!target.has(s) || !item.expected.has(s) || !now.has(s) || now.same(item.expected, s))
            continue;
          notes.push_back(fmt::format("GPU {}: {} was changed since to {}; left as it is",
                                      gpu->facts().index, control::label_of(s),
                                      control::describe(now, s)));
          target.clear(s);
        }
        // Restored whole (it leaves the journal) only when the session's settings are all the
        // journal lists for it, so nobody else's change is undone with them.
        const auto* entry = journal.find(uuid);
        bool whole_gpu = item.drop_from_journal && entry != nullptr;
        for (auto s : control::kWriteOrder)
          whole_gpu = whole_gpu && (!entry->touched.count(s) || target.has(s));
        if (whole_gpu) {
          whole.push_back(gpu);
          uuids.push_back(uuid);
        } else if (!target.empty()) {
          changes.push_back({gpu, target});
        }
      }
      control::ChangeReport report;
      if (!whole.empty()) report = control::restore(whole, journal, persist, options, uuids);
      if (!changes.empty()) {
        report.append(control::apply_changes(changes, journal, persist, options));
      }
      report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
      return report;
    });
  };
  return b;
}

}  // namespace gpuclk::serve
