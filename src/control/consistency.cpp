#include "control/consistency.h"

#include <fmt/format.h>

#include "control/setting_table.h"

namespace gpuclk::control {
namespace {

std::string_view short_label(Setting s) {
  return table::with_row(s, [](const auto& row) { return row.short_label; });
}

}  // namespace

std::string applied_summary(const JournalEntry& entry) {
  std::string out;
  for (auto s : kWriteOrder) {
    std::string part;
    if (entry.pending.has(s))
      part = fmt::format("{} {} (interrupted)", short_label(s), describe(entry.pending, s));
    else if (entry.applied.has(s))
      part = fmt::format("{} {}", short_label(s), describe(entry.applied, s));
    if (!part.empty()) out += (out.empty() ? "" : ", ") + part;
  }
  return out;
}

void add_journal_locks(Settings& settings, const Journal& journal, const std::string& uuid) {
  const auto* e = journal.find(uuid);
  for (auto s : {Setting::locked_gpu_clocks, Setting::locked_memory_clocks}) {
    if (e && e->pending.has(s)) continue;
    if (e && e->applied.has(s)) {
      settings.copy_from(e->applied, s);
    } else {
      Settings unlocked;
      unlocked.locked_gpu_clocks = unlocked.locked_memory_clocks = ClockLock::none();
      settings.copy_from(unlocked, s);
    }
  }
}

std::map<std::string, std::vector<Difference>> settings_that_differ(
    const std::vector<GpuSettingsView>& gpus) {
  std::map<std::string, std::vector<Difference>> out;
  std::map<std::string, std::vector<const GpuSettingsView*>> by_model;
  for (const auto& g : gpus) by_model[g.model].push_back(&g);
  for (const auto& [model, same] : by_model) {
    if (same.size() < 2) continue;
    for (auto s : kWriteOrder) {
      std::map<std::string, std::size_t> counts;
      for (const auto* g : same) {
        if (g->settings.has(s)) ++counts[describe(g->settings, s)];
      }
      if (counts.size() < 2) continue;
      auto majority = counts.begin();
      for (auto it = counts.begin(); it != counts.end(); ++it) {
        if (it->second > majority->second) majority = it;
      }
      for (const auto* g : same) {
        if (!g->settings.has(s)) continue;
        auto value = describe(g->settings, s);
        if (value != majority->first) out[g->uuid].push_back({s, value, majority->first});
      }
    }
  }
  return out;
}

}  // namespace gpuclk::control
