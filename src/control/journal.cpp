#include "control/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gpuclk::control {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written: the file is read by people too

json bound_json(const ClockBound& b) {
  if (b.symbolic()) return describe(b);
  return b.mhz;
}

ClockBound bound_from(const json& j) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    if (s == "tdp") return ClockBound::tdp();
    if (s == "unlimited") return ClockBound::unlimited();
    throw std::runtime_error("unknown clock limit '" + s + "'");
  }
  return ClockBound::megahertz(j.get<unsigned>());
}

json lock_json(const ClockLock& lock) {
  if (!lock.locked) return "unlocked";
  return json{{"min_mhz", bound_json(lock.min)}, {"max_mhz", bound_json(lock.max)}};
}

ClockLock lock_from(const json& j) {
  if (j.is_string() && j.get<std::string>() == "unlocked") return ClockLock::none();
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
  if (s.power_limit_mw) j["power_limit_mw"] = *s.power_limit_mw;
  return j;
}

Settings settings_from(const json& j) {
  Settings s;
  if (j.contains("persistence_mode")) s.persistence_mode = j.at("persistence_mode").get<bool>();
  if (j.contains("application_clocks")) {
    const auto& a = j.at("application_clocks");
    s.application_clocks =
        ApplicationClocks{a.at("memory_mhz").get<unsigned>(), a.at("graphics_mhz").get<unsigned>()};
  }
  if (j.contains("locked_gpu_clocks")) s.locked_gpu_clocks = lock_from(j.at("locked_gpu_clocks"));
  if (j.contains("locked_memory_clocks"))
    s.locked_memory_clocks = lock_from(j.at("locked_memory_clocks"));
  if (j.contains("power_limit_mw")) s.power_limit_mw = j.at("power_limit_mw").get<std::uint32_t>();
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
  for (const auto& k : j) {
    auto s = setting_by_key(k.get<std::string>());
    if (!s) throw std::runtime_error("unknown setting '" + k.get<std::string>() + "'");
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
    if (j.value("format", "") != "gpuclk-journal") throw std::runtime_error("not a gpuclk journal");
    if (j.value("version", 0) != Journal::kVersion) {
      throw std::runtime_error(fmt::format("journal version {}, this gpuclk reads {}",
                                           j.value("version", 0), Journal::kVersion));
    }
    Journal journal;
    journal.boot_id = j.value("boot_id", "");
    for (const auto& g : j.at("gpus")) {
      JournalEntry e;
      e.uuid = g.at("uuid").get<std::string>();
      e.index = g.at("index").get<unsigned>();
      e.name = g.value("name", "");
      e.pci_bus_id = g.value("pci_bus_id", "");
      e.original = settings_from(g.at("original"));
      e.assumed = setting_list_from(g.value("original_assumed", json::array()));
      e.touched = setting_list_from(g.at("touched"));
      e.applied = settings_from(g.value("applied", json::object()));
      e.pending = settings_from(g.value("pending", json::object()));
      e.first_change = g.value("first_change", "");
      e.last_change = g.value("last_change", "");
      journal.gpus.push_back(std::move(e));
    }
    for (const auto& h : j.value("history", json::array())) {
      journal.history.push_back({h.value("time", ""), h.value("pid", 0L), h.value("command", ""),
                                 h.value("gpu", 0U), h.value("uuid", ""), h.value("setting", ""),
                                 h.value("from", ""), h.value("to", ""), h.value("outcome", "")});
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
