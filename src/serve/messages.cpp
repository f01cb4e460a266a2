#include "serve/messages.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string_view>

#include "control/journal.h"
#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

using nlohmann::json;

json request_named(const char* name) { return json{{"request", name}}; }

json indexes_json(const std::vector<unsigned>& indexes) {
  json a = json::array();
  for (auto i : indexes) a.push_back(i);
  return a;
}

std::vector<gpu::DeviceKey> keys_of(const json& gpus) {
  std::vector<gpu::DeviceKey> keys;
  for (const auto& g : gpus) keys.push_back(device_key_from_json(g));
  return keys;
}

std::optional<double> number_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// Seconds in a time base (the sampler's, a stream line's "time") as a time point of it.
telemetry::TimePoint time_point_of(double seconds) {
  return telemetry::TimePoint(
      std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds)));
}

telemetry::Duration milliseconds_of(const json& j, const char* key) {
  return std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double, std::milli>(j.value(key, 0.0)));
}

std::optional<telemetry::ClockStatistics> clock_statistics_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto mhz = [&j](const char* key) { return units::Megahertz(j.at(key).get<double>()); };
  return telemetry::ClockStatistics{mhz("p5"),   mhz("median"), mhz("p95"),
                                    mhz("mean"), mhz("min"),    mhz("max")};
}

template <class Q>
std::optional<Q> quantity_at(const json& j, const char* key) {
  const auto v = number_at(j, key);
  return v ? std::optional<Q>(Q(*v)) : std::nullopt;
}

// The inverse of protocol.h's to_json(Summary): what travels of it.
telemetry::Summary summary_from_json(const json& j, telemetry::TimePoint now) {
  telemetry::Summary s;
  s.from = now + std::chrono::duration_cast<telemetry::Duration>(
                     std::chrono::duration<double>(j.value("from", 0.0)));
  s.to = now + std::chrono::duration_cast<telemetry::Duration>(
                   std::chrono::duration<double>(j.value("to", 0.0)));
  s.fast_samples = j.value("fast_samples", std::size_t{0});
  s.slow_samples = j.value("slow_samples", std::size_t{0});
  s.energy = quantity_at<units::Joules>(j, "energy_joules");
  if (j.value("energy_source", std::string()) ==
      telemetry::to_string(telemetry::EnergySource::counter))
    s.energy_source = telemetry::EnergySource::counter;
  s.power_mean = quantity_at<units::Watts>(j, "power_mean_watts");
  s.power_peak = quantity_at<units::Watts>(j, "power_peak_watts");
  s.sm_clock = clock_statistics_from_json(j.value("sm_clock_mhz", json()));
  s.memory_clock = clock_statistics_from_json(j.value("memory_clock_mhz", json()));
  for (const auto& r : j.value("clock_reasons", json::array())) {
    const auto name = r.at("reason").get<std::string>();
    for (const auto& info : gpu::clock_reasons()) {
      if (info.key == name)
        s.clock_reasons.push_back({info.bit, units::Ratio(r.at("fraction").get<double>())});
    }
  }
  s.gpu_utilization = quantity_at<units::Ratio>(j, "gpu_utilization_ratio");
  s.memory_utilization = quantity_at<units::Ratio>(j, "memory_utilization_ratio");
  s.temperature_max = quantity_at<units::Celsius>(j, "temperature_max_celsius");
  s.power_violation = quantity_at<units::Ratio>(j, "power_violation_ratio");
  s.thermal_violation = quantity_at<units::Ratio>(j, "thermal_violation_ratio");
  s.lost = j.value("lost", false);
  return s;
}

}  // namespace

// --- requests -----------------------------------------------------------------------------------

json hello_request() { return request_named("hello"); }

json status_request() { return request_named("status"); }

json view_request(const std::string& name) {
  auto r = request_named("view");
  r["name"] = name;
  return r;
}

json history_request(const HistoryRequest& h) {
  auto r = request_named("history");
  if (h.gpus) r["gpus"] = indexes_json(*h.gpus);
  r["seconds"] = h.seconds;
  r["resolution"] = h.every_sample ? "interval" : "1s";
  if (h.slow) r["slow"] = true;
  return r;
}

json summary_request(const std::optional<std::vector<unsigned>>& gpus, double seconds) {
  auto r = request_named("summary");
  if (gpus) r["gpus"] = indexes_json(*gpus);
  r["seconds"] = seconds;
  return r;
}

json snapshot_request(const std::vector<unsigned>& gpus, bool read_counters) {
  auto r = request_named("snapshot");
  r["gpus"] = indexes_json(gpus);
  if (read_counters) r["read_counters"] = true;
  return r;
}

json processes_request(const std::optional<std::string>& owner) {
  auto r = request_named("processes");
  if (owner) r["owner"] = *owner;
  return r;
}

json collectives_request(const std::optional<std::string>& owner) {
  auto r = request_named("collectives");
  if (owner) r["owner"] = *owner;
  return r;
}

json set_request(const SetRequest& s) {
  auto r = request_named("set");
  r["settings"] = s.settings;
  if (s.gpus) r["gpus"] = indexes_json(*s.gpus);
  if (s.snap) r["snap"] = true;
  if (s.dry_run) r["dry_run"] = true;
  if (!s.settle) r["settle"] = false;
  return r;
}

json restore_request(const std::optional<std::vector<unsigned>>& gpus) {
  auto r = request_named("restore");
  if (gpus) r["gpus"] = indexes_json(*gpus);
  return r;
}

json stream_request(const StreamRequest& s) {
  auto r = request_named("stream");
  r["gpus"] = indexes_json(s.gpus);
  r["interval_seconds"] = s.interval_seconds;
  if (s.count > 0) r["count"] = s.count;
  if (!s.fields.empty()) {
    json names = json::array();
    for (std::size_t i = 0; i < static_cast<std::size_t>(telemetry::Field::count); ++i) {
      const auto f = static_cast<telemetry::Field>(i);
      if (s.fields.has(f)) names.push_back(std::string(telemetry::field_name(f)));
    }
    r["fields"] = names;
  }
  if (s.every_sample) r["samples"] = "all";
  return r;
}

// --- answers ------------------------------------------------------------------------------------

Hello hello_from_json(const json& a) {
  Hello h;
  h.service = a.value("service", std::string());
  h.simulated = a.value("simulated", std::string());
  h.sim_state = a.value("sim_state", std::string());
  h.interval_seconds = number_at(a, "interval_seconds");
  h.slow_interval_seconds = number_at(a, "slow_interval_seconds");
  h.history_seconds = number_at(a, "history_seconds");
  h.gpus = keys_of(a.at("gpus"));
  if (auto it = a.find("delegation"); it != a.end()) h.delegation = it->get<std::string>();
  return h;
}

StatusAnswer status_answer_from_json(const json& a) {
  StatusAnswer s;
  s.gpus = keys_of(a.at("gpus"));
  for (const auto& st : a.at("status")) s.status.push_back(status_from_json(st));
  s.simulated = a.value("simulated", std::string());
  s.sim_time_note = a.value("sim_time_note", std::string());
  return s;
}

ClocksView clocks_view_from_json(const json& a) {
  ClocksView v;
  v.gpus = keys_of(a.at("gpus"));
  for (const auto& row : a.at("rows")) {
    v.rows.push_back({row.at("name").get<std::string>(),
                      control::settings_from_json(row.at("settings").get<std::string>()),
                      node_from_json(row.at("tree"))});
  }
  return v;
}

InfoView info_view_from_json(const json& a) {
  InfoView v;
  v.gpus = keys_of(a.at("gpus"));
  v.host = node_from_json(a.at("node"));
  for (const auto& row : a.at("rows")) v.rows.push_back(node_from_json(row));
  return v;
}

TopoView topo_view_from_json(const json& a) {
  TopoView v;
  v.gpus = keys_of(a.at("gpus"));
  const auto& node = a.at("node");
  v.table = table_from_json(node);
  if (auto it = node.find("nvlink"); it != node.end()) {
    for (const auto& line : *it) v.nvlink.push_back(line.get<std::string>());
  }
  v.cpus_from = node.value("cpus_from", std::string());
  if (auto it = node.find("nvlink_columns"); it != node.end())
    v.nvlink_columns = table_from_json(*it);
  return v;
}

QueryView query_view_from_json(const json& a) {
  QueryView v;
  v.gpus = keys_of(a.at("gpus"));
  for (const auto& row : a.at("rows")) {
    auto& fields = v.rows.emplace_back();
    for (const auto& [name, value] : row.items()) fields.emplace(name, value_from_json(value));
  }
  return v;
}

const output::Value& QueryView::value(std::size_t pos, std::string_view field) const {
  const auto& row = rows.at(pos);
  auto it = row.find(field);
  if (it == row.end()) {
    throw Error(
        ExitCode::other,
        fmt::format("the service's query view has no field '{}' (an older gpuclk serve)", field),
        "use --direct to read the GPUs without it");
  }
  return it->second;
}

TopView top_view_from_json(const json& a) {
  TopView v;
  v.gpus = keys_of(a.at("gpus"));
  for (const auto& row : a.at("rows")) {
    auto& g = v.rows.emplace_back();
    if (auto it = row.find("memory_total_bytes"); it != row.end() && it->is_number())
      g.memory_total = units::Bytes(it->get<double>());
    auto it = row.find("processes");
    if (it == row.end() || !it->is_array()) continue;
    auto& processes = g.processes.emplace();
    for (const auto& p : *it) {
      TopView::Process e;
      e.pid = p.value("pid", 0U);
      if (auto m = p.find("used_memory_bytes"); m != p.end() && m->is_number())
        e.used_memory = units::Bytes(m->get<double>());
      if (auto n = p.find("name"); n != p.end() && n->is_string()) e.name = n->get<std::string>();
      if (auto o = p.find("owner"); o != p.end() && o->is_string()) {
        e.owner = host::parse_owner_key(o->get<std::string>());
        if (e.owner) e.owner->user = p.value("owner_user", std::string());
      }
      processes.push_back(std::move(e));
    }
  }
  return v;
}

std::vector<HistoryGpu> history_from_json(const json& a, telemetry::TimePoint now) {
  std::vector<HistoryGpu> out;
  for (const auto& g : a.at("gpus")) {
    auto& h = out.emplace_back();
    h.key = device_key_from_json(g);
    for (const auto& s : g.at("samples")) h.samples.push_back(fast_sample_from_json(s, now));
    // (A service older than the "slow" option answers without them.)
    if (auto it = g.find("slow"); it != g.end() && it->is_array()) {
      for (const auto& s : *it) h.slow.push_back(slow_sample_from_json(s, now));
    }
    const auto events = g.find("events");
    const auto watched = g.find("events_watched");
    h.events_kept = events != g.end() && watched != g.end();
    if (!h.events_kept) continue;
    for (const auto& e : *events) h.events.push_back(event_from_json(e, h.key.index, now));
    for (const auto& kind : *watched) {
      if (auto k = event_kind_from_string(kind.get<std::string>())) h.events_watched.push_back(*k);
    }
  }
  return out;
}

std::vector<GpuSummary> summaries_from_json(const json& a, telemetry::TimePoint now) {
  std::vector<GpuSummary> out;
  for (const auto& g : a.at("gpus"))
    out.push_back({device_key_from_json(g), summary_from_json(g.at("summary"), now)});
  return out;
}

Snapshot snapshot_from_json(const json& a, telemetry::TimePoint now) {
  Snapshot s;
  for (const auto& j : a.at("gpus")) {
    auto& g = s.gpus.emplace_back();
    g.key = device_key_from_json(j);
    if (j.contains("fast")) g.fast = fast_sample_from_json(j.at("fast"), now);
    if (j.contains("slow")) g.slow = slow_sample_from_json(j.at("slow"), now);
    g.lost = j.value("lost", false);
    g.read_errors = j.value("read_errors", std::uint64_t{0});
    g.simulator_energy_j = number_at(j, "simulator_energy_j");
  }
  if (const auto t = number_at(a, "now")) s.now = time_point_of(*t);
  if (const auto t = number_at(a, "time")) s.time = time_point_of(*t);
  const auto timing = a.value("timing", json::object());
  s.timing.ticks = timing.value("ticks", std::uint64_t{0});
  s.timing.missed_ticks = timing.value("missed_ticks", std::uint64_t{0});
  s.timing.lateness_p50 = milliseconds_of(timing, "lateness_p50_ms");
  s.timing.lateness_p99 = milliseconds_of(timing, "lateness_p99_ms");
  s.timing.lateness_max = milliseconds_of(timing, "lateness_max_ms");
  s.timing.tick_cost_mean = milliseconds_of(timing, "tick_cost_mean_ms");
  return s;
}

ProcessesAnswer processes_from_json(const json& a) {
  ProcessesAnswer p;
  p.gpus = keys_of(a.at("gpus"));
  p.view = attribution_from_json(a, kAnswerTime);
  p.interval_s = a.value("interval_s", 1.0);
  p.text = a.dump();
  return p;
}

json ProcessesAnswer::processes_document(const std::set<unsigned>& indexes, bool ended_too) const {
  // The text is what the service sent, parsed and written again: the same values, doubles too.
  json j = json::parse(text);
  j.erase("v");
  j.erase("ok");
  auto& processes = j["processes"];
  processes.erase(std::remove_if(processes.begin(), processes.end(),
                                 [&](const json& p) {
                                   return !indexes.contains(p.at("gpu").get<unsigned>()) ||
                                          (!ended_too && !p.at("running").get<bool>());
                                 }),
                  processes.end());
  return j;
}

json ProcessesAnswer::owner_document() const {
  const auto answer = json::parse(text);
  json j = answer.at("owners").at(0);
  j["processes"] = answer.at("processes");
  return j;
}

ChangeAnswer change_answer_from_json(const json& a) {
  ChangeAnswer c;
  c.report = change_report_from_json(a.at("report"));
  c.rule = a.value("rule", std::string());
  c.journal = a.value("journal", std::string());
  c.session = a.value("session", 0);
  if (auto it = a.find("held_until"); it != a.end()) c.held_until = it->get<std::string>();
  return c;
}

StreamLine stream_line_from_json(const json& line) {
  StreamLine l;
  l.end = line.value("end", false);
  if (l.end) return l;
  l.time = time_point_of(line.value("time", 0.0));
  for (const auto& j : line.at("gpus")) {
    auto& g = l.gpus.emplace_back();
    g.key = device_key_from_json(j);
    if (j.contains("fast")) g.fast = fast_sample_from_json(j.at("fast"), l.time);
    if (j.contains("slow")) g.slow = slow_sample_from_json(j.at("slow"), l.time);
    if (j.contains("previous_slow"))
      g.previous_slow = slow_sample_from_json(j.at("previous_slow"), l.time);
    g.energy = quantity_at<units::Joules>(j, "energy_joules");
    g.health.lost = j.value("lost", false);
    g.health.read_errors = j.value("read_errors", std::uint64_t{0});
    g.health.last_error = j.value("last_error", 0);
    g.health.last_error_field = j.value("last_error_field", std::string());
    if (const auto lost_t = number_at(j, "lost_t"))
      g.health.lost_at = l.time + std::chrono::duration_cast<telemetry::Duration>(
                                      std::chrono::duration<double>(*lost_t));
    if (auto it = j.find("samples"); it != j.end()) {
      for (const auto& s : *it) g.samples.push_back(fast_sample_from_json(s, l.time));
    }
    if (auto it = j.find("slow_samples"); it != j.end()) {
      for (const auto& s : *it) g.slow_samples.push_back(slow_sample_from_json(s, l.time));
    }
  }
  return l;
}

}  // namespace gpuclk::serve
