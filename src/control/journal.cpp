#include "control/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/parse.h"

namespace gpuclk::control {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written: the file is read by people too

// Checked reads: the journal is an input like any other (a person may edit it, a disk may
// corrupt it). Every value is type- and range-checked; nothing is converted unchecked.
constexpr std::uint64_t kMaxIndex = 4095;

std::uint64_t whole(const json& j, const char* what, std::uint64_t max) {
  if (!j.is_number_unsigned()) {
    throw std::runtime_error(fmt::format("{} must be a whole number, not {}", what, j.type_name()));
  }
  const auto v = j.get<std::uint64_t>();
  if (v > max) throw std::runtime_error(fmt::format("{} {} is above {}", what, v, max));
  return v;
}

unsigned mhz(const json& j, const char* what) {
  return static_cast<unsigned>(whole(j, what, kMaxMhz));
}

std::string string_of(const json& j, const char* what) {
  if (!j.is_string())
    throw std::runtime_error(fmt::format("{} must be a string, not {}", what, j.type_name()));
  return j.get<std::string>();
}

// `key` of object `j` as text, or "" when absent.
std::string text_or_empty(const json& j, const char* key) {
  return j.contains(key) ? string_of(j.at(key), key) : std::string();
}

const json& object(const json& j, const char* what) {
  if (!j.is_object())
    throw std::runtime_error(fmt::format("{} must be an object, not {}", what, j.type_name()));
  return j;
}

const json& array(const json& j, const char* what) {
  if (!j.is_array())
    throw std::runtime_error(fmt::format("{} must be an array, not {}", what, j.type_name()));
  return j;
}

json bound_json(const ClockBound& b) {
  if (b.symbolic()) return describe(b);
  return b.mhz;
}

ClockBound bound_from(const json& j) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    if (s == "tdp") return ClockBound::tdp();
    if (s == "unlimited") return ClockBound::unlimited();
    throw std::runtime_error("unknown clock limit '" + parse::quote(s) + "'");
  }
  return ClockBound::megahertz(mhz(j, "a clock limit"));
}

json lock_json(const ClockLock& lock) {
  if (!lock.locked) return "unlocked";
  return json{{"min_mhz", bound_json(lock.min)}, {"max_mhz", bound_json(lock.max)}};
}

ClockLock lock_from(const json& j) {
  if (j.is_string() && j.get<std::string>() == "unlocked") return ClockLock::none();
  object(j, "a clock lock");
  return ClockLock::range(bound_from(j.at("min_mhz")), bound_from(j.at("max_mhz")));
}

json settings_json(const Settings& s) {
  json j = json::object();
  if (s.persistence_mode) j["persistence_mode"] = *s.persistence_mode;
  if (s.application_clocks) {
    j["application_clocks"] = {{"memory_mhz", s.application_clocks->memory_mhz},
                               {"graphics_mhz", s.application_clocks->graphics_mhz}};
  }
  if (s.locked_gpu_clocks) j["locked_gpu_clocks"] = lock_json(*s.locked_gpu_clocks);
  if (s.locked_memory_clocks) j["locked_memory_clocks"] = lock_json(*s.locked_memory_clocks);
  if (s.power_limit_mw) j["power_limit_mw"] = s.power_limit_mw->count();
  return j;
}

Settings settings_from(const json& j) {
  Settings s;
  object(j, "settings");
  if (j.contains("persistence_mode")) {
    if (!j.at("persistence_mode").is_boolean())
      throw std::runtime_error("persistence_mode must be true or false");
    s.persistence_mode = j.at("persistence_mode").get<bool>();
  }
  if (j.contains("application_clocks")) {
    const auto& a = object(j.at("application_clocks"), "application_clocks");
    s.application_clocks = ApplicationClocks{mhz(a.at("memory_mhz"), "memory_mhz"),
                                             mhz(a.at("graphics_mhz"), "graphics_mhz")};
  }
  if (j.contains("locked_gpu_clocks")) s.locked_gpu_clocks = lock_from(j.at("locked_gpu_clocks"));
  if (j.contains("locked_memory_clocks"))
    s.locked_memory_clocks = lock_from(j.at("locked_memory_clocks"));
  // The driver's limits are 32-bit milliwatts.
  if (j.contains("power_limit_mw")) {
    s.power_limit_mw =
        units::Milliwatts(whole(j.at("power_limit_mw"), "power_limit_mw", 0xffffffffu));
  }
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
