#include "control/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "control/json_checked.h"
#include "control/setting_table.h"
#include "util/parse.h"

namespace gpuclk::control {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written: the file is read by people too
using checked::array;
using checked::mhz;
using checked::object;
using checked::string_of;
using checked::whole;

// Checked reads (json_checked.h): the journal is an input like any other.
constexpr std::uint64_t kMaxIndex = 4095;

// `key` of object `j` as text, or "" when absent.
std::string text_or_empty(const json& j, const char* key) {
  return j.contains(key) ? string_of(j.at(key), key) : std::string();
}

json settings_json(const Settings& s) {
  json j = json::object();
  table::for_each_row([&](const auto& row) {
    if (const auto& v = s.*row.value) j[std::string(row.journal_key)] = row.to_json(*v);
  });
  return j;
}

Settings settings_from(const json& j) {
  Settings s;
  object(j, "settings");
  table::for_each_row([&](const auto& row) {
    const auto key = std::string(row.journal_key);
    if (j.contains(key)) s.*row.value = row.from_json(j.at(key));
  });
  return s;
}

json setting_list(const std::set<Setting>& settings) {
  json a = json::array();
  for (auto s : kWriteOrder) {
    if (settings.count(s)) a.push_back(std::string(key_of(s)));
  }
  return a;
}

std::set<Setting> setting_list_from(const json& j) {
  std::set<Setting> out;
  for (const auto& k : array(j, "a setting list")) {
    const auto key = string_of(k, "a setting name");
    auto s = setting_by_key(key);
    if (!s) throw std::runtime_error("unknown setting '" + parse::quote(key) + "'");
    out.insert(*s);
  }
  return out;
}

}  // namespace

JournalEntry* Journal::find(const std::string& uuid) {
  for (auto& e : gpus) {
    if (e.uuid == uuid) return &e;
  }
  return nullptr;
}

const JournalEntry* Journal::find(const std::string& uuid) const {
  return const_cast<Journal*>(this)->find(uuid);
}

JournalEntry& Journal::entry_for(const GpuFacts& facts, const Settings& before,
                                 const std::string& now) {
  if (auto* e = find(facts.uuid)) {
    e->index = facts.index;
    return *e;
  }
  JournalEntry e;
  e.uuid = facts.uuid;
  e.index = facts.index;
  e.name = facts.name;
  e.pci_bus_id = facts.pci_bus_id;
  e.original = before;
  for (auto s : {Setting::locked_gpu_clocks, Setting::locked_memory_clocks}) {
    if (!before.has(s)) {
      Settings unlocked;
      unlocked.locked_gpu_clocks = unlocked.locked_memory_clocks = ClockLock::none();
      e.original.copy_from(unlocked, s);
      e.assumed.insert(s);
    }
  }
  e.first_change = e.last_change = now;
  gpus.push_back(std::move(e));
  std::sort(gpus.begin(), gpus.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  return *find(facts.uuid);
}

void Journal::remove(const std::string& uuid) {
  gpus.erase(
      std::remove_if(gpus.begin(), gpus.end(), [&](const auto& e) { return e.uuid == uuid; }),
      gpus.end());
}

void Journal::add_history(HistoryRecord record) {
  history.push_back(std::move(record));
  if (history.size() > kHistoryLimit) {
    history.erase(history.begin(),
                  history.begin() + static_cast<long>(history.size() - kHistoryLimit));
  }
}

std::string settings_to_json(const Settings& s) { return settings_json(s).dump(); }

Settings settings_from_json(const std::string& text) { return settings_from(json::parse(text)); }

std::string to_json(const Journal& journal) {
  json j;
  j["format"] = "gpuclk-journal";
  j["version"] = Journal::kVersion;
  j["boot_id"] = journal.boot_id;
  j["gpus"] = json::array();
  for (const auto& e : journal.gpus) {
    j["gpus"].push_back({{"uuid", e.uuid},
                         {"index", e.index},
                         {"name", e.name},
                         {"pci_bus_id", e.pci_bus_id},
                         {"original", settings_json(e.original)},
                         {"original_assumed", setting_list(e.assumed)},
                         {"touched", setting_list(e.touched)},
                         {"applied", settings_json(e.applied)},
                         {"pending", settings_json(e.pending)},
                         {"first_change", e.first_change},
                         {"last_change", e.last_change}});
  }
  j["history"] = json::array();
  for (const auto& h : journal.history) {
    j["history"].push_back({{"time", h.time},
                            {"pid", h.pid},
                            {"command", h.command},
                            {"gpu", h.gpu},
                            {"uuid", h.uuid},
                            {"setting", h.setting},
                            {"from", h.from},
                            {"to", h.to},
                            {"outcome", h.outcome}});
  }
  return j.dump(2) + "\n";
}

Journal journal_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  try {
    object(j, "the journal");
    if (text_or_empty(j, "format") != "gpuclk-journal")
      throw std::runtime_error("not a gpuclk journal");
    const auto version = j.contains("version") ? whole(j.at("version"), "version", 1'000'000) : 0;
    if (version != static_cast<std::uint64_t>(Journal::kVersion)) {
      throw std::runtime_error(
          fmt::format("journal version {}, this gpuclk reads {}", version, Journal::kVersion));
    }
    Journal journal;
    journal.boot_id = text_or_empty(j, "boot_id");
    std::set<std::string> uuids;
    for (const auto& g : array(j.at("gpus"), "gpus")) {
      object(g, "a gpus entry");
      JournalEntry e;
      e.uuid = string_of(g.at("uuid"), "uuid");
      if (e.uuid.empty()) throw std::runtime_error("a gpus entry has an empty uuid");
      if (!uuids.insert(e.uuid).second)
        throw std::runtime_error("GPU " + parse::quote(e.uuid) + " is listed twice");
      e.index = static_cast<unsigned>(whole(g.at("index"), "index", kMaxIndex));
      e.name = text_or_empty(g, "name");
      e.pci_bus_id = text_or_empty(g, "pci_bus_id");
      e.original = settings_from(g.at("original"));
      e.assumed = setting_list_from(g.contains("original_assumed") ? g.at("original_assumed")
                                                                   : json::array());
      e.touched = setting_list_from(g.at("touched"));
      e.applied = settings_from(g.contains("applied") ? g.at("applied") : json::object());
      e.pending = settings_from(g.contains("pending") ? g.at("pending") : json::object());
      e.first_change = text_or_empty(g, "first_change");
      e.last_change = text_or_empty(g, "last_change");
      journal.gpus.push_back(std::move(e));
    }
    if (j.contains("history")) {
      for (const auto& h : array(j.at("history"), "history")) {
        object(h, "a history record");
        journal.add_history(
            {text_or_empty(h, "time"),
             h.contains("pid") ? static_cast<long>(whole(h.at("pid"), "pid", 1u << 30)) : 0L,
             text_or_empty(h, "command"),
             h.contains("gpu") ? static_cast<unsigned>(whole(h.at("gpu"), "gpu", kMaxIndex)) : 0U,
             text_or_empty(h, "uuid"), text_or_empty(h, "setting"), text_or_empty(h, "from"),
             text_or_empty(h, "to"), text_or_empty(h, "outcome")});
      }
    }
    return journal;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed: ") + e.what());
  }
}

std::string utc_now() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gpuclk::control
