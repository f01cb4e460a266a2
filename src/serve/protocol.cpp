#include "serve/protocol.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "telemetry/field_table.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

double seconds(telemetry::Duration d) { return std::chrono::duration<double>(d).count(); }

// A Reading travels as {"v": value} when present, {"na": true} when not supported, and
// {"err": code} on an error, so the receiver rebuilds exactly the same Reading.
template <class T, class F>
json reading(const gpu::Reading<T>& r, F&& encode) {
  if (r) return json{{"v", encode(*r)}};
  if (r.status() == gpu::ReadStatus::error) return json{{"err", r.error_code()}};
  return json{{"na", true}};
}
template <class T>
json quantity(const gpu::Reading<T>& r) {
  return reading(r, [](const T& q) { return q.value(); });
}

template <class T, class F>
gpu::Reading<T> reading_from(const json& j, F&& decode) {
  if (j.contains("v")) return gpu::Reading<T>(decode(j.at("v")));
  if (j.contains("err")) return gpu::Reading<T>::error(j.at("err").get<int>());
  return gpu::Reading<T>::not_supported();
}
template <class T>
gpu::Reading<T> quantity_from(const json& j) {
  return reading_from<T>(j, [](const json& v) { return T(v.get<double>()); });
}

template <class Q>
void put(json& j, std::string_view key, const std::optional<Q>& q) {
  if (q) j[std::string(key)] = q->value();
}
void put(json& j, std::string_view key, const std::optional<std::uint64_t>& n) {
  if (n) j[std::string(key)] = *n;
}
void put(json& j, std::string_view key, const std::optional<std::chrono::nanoseconds>& d) {
  if (d) j[std::string(key)] = seconds(*d);
}

}  // namespace

namespace {

std::string socket_path_for(const std::string& explicit_path, unsigned euid) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("GPUCLK_SOCKET"); env && *env) return env;
  if (euid == 0) return kSystemSocket;
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg)
    return std::string(xdg) + "/gpuclk.sock";
  return "/tmp/gpuclk-" + std::to_string(euid) + ".sock";
}

}  // namespace

std::string socket_path(const std::string& explicit_path) {
  return socket_path_for(explicit_path, ::geteuid());
}

std::vector<std::string> client_socket_paths(const std::string& explicit_path, unsigned euid) {
  std::vector<std::string> out{socket_path_for(explicit_path, euid)};
  const char* env = std::getenv("GPUCLK_SOCKET");
  const bool named = !explicit_path.empty() || (env && *env);
  if (!named && euid != 0 && out.front() != kSystemSocket) out.emplace_back(kSystemSocket);
  return out;
}

json error_response(const std::string& message, int exit_code) {
  return json{{"v", kProtocolVersion}, {"ok", false}, {"error", message}, {"code", exit_code}};
}

namespace {

// The value as a client wrote it, at most 80 characters, for an error message.
std::string shown(const json& value) {
  auto text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

}  // namespace

unsigned gpu_index_of(const json& value) {
  constexpr std::uint64_t kMaxIndex = 4095;
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() > kMaxIndex)
    throw bad_argument(fmt::format("bad GPU index {}", shown(value)),
                       fmt::format("give a GPU's index, a whole number from 0 to {}", kMaxIndex));
  return static_cast<unsigned>(value.get<std::uint64_t>());
}

double number_of(const json& request, const char* key, double fallback, double min, double max) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  const double v = it->is_number() ? it->get<double>() : std::nan("");
  if (!(v >= min && v <= max))
    throw bad_argument(fmt::format("bad {} {}", key, shown(*it)),
                       fmt::format("give a number from {} to {}", min, max));
  return v;
}

std::uint64_t count_of(const json& request, const char* key, std::uint64_t fallback,
                       std::uint64_t max) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() > max)
    throw bad_argument(fmt::format("bad {} {}", key, shown(*it)),
                       fmt::format("give a whole number from 0 to {}", max));
  return it->get<std::uint64_t>();
}

std::string string_of(const json& request, const char* key, const std::string& fallback) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (!it->is_string())
    throw bad_argument(fmt::format("bad {} {}", key, shown(*it)), "give a string");
  return it->get<std::string>();
}

bool flag_of(const json& request, const char* key, bool fallback) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (!it->is_boolean())
    throw bad_argument(fmt::format("bad {} {}", key, shown(*it)), "give true or false");
  return it->get<bool>();
}

json to_json(const gpu::StatusSnapshot& s) {
  json j;
  j["index"] = s.index;
  j["name"] = s.name;
  j["uuid"] = s.uuid;
  j["unavailable_code"] = s.unavailable_code;
  j["pstate"] = reading(s.pstate, [](int p) { return p; });
  j["sm_clock"] = quantity(s.sm_clock);
  j["sm_max"] = quantity(s.sm_max);
  j["memory_clock"] = quantity(s.memory_clock);
  j["memory_max"] = quantity(s.memory_max);
  j["app_sm_clock"] = quantity(s.app_sm_clock);
  j["app_memory_clock"] = quantity(s.app_memory_clock);
  j["default_app_sm_clock"] = quantity(s.default_app_sm_clock);
  j["default_app_memory_clock"] = quantity(s.default_app_memory_clock);
  j["power_draw"] = quantity(s.power_draw);
  j["power_limit"] = quantity(s.power_limit);
  j["default_power_limit"] = quantity(s.default_power_limit);
  j["temperature"] = quantity(s.temperature);
  j["slowdown_temperature"] = quantity(s.slowdown_temperature);
  j["utilization"] = reading(s.utilization, [](const gpu::Utilization& u) {
    return json{{"gpu", u.gpu.value()}, {"memory", u.memory.value()}};
  });
  j["clock_reasons"] =
      reading(s.clock_reasons, [](const gpu::ClockReasons& r) { return r.bits(); });
  j["persistence_mode"] = reading(s.persistence_mode, [](bool b) { return b; });
  auto link = [](const gpu::PcieLink& l) {
    return json{{"generation", l.generation}, {"width", l.width}};
  };
  j["pcie_link"] = reading(s.pcie_link, link);
  j["pcie_max"] = reading(s.pcie_max, link);
  j["retired_pages"] = reading(s.retired_pages, [](const gpu::RetiredPages& r) {
    return json{{"multiple_sbe", r.multiple_sbe}, {"dbe", r.dbe}, {"pending", r.pending}};
  });
  return j;
}

gpu::StatusSnapshot status_from_json(const json& j) {
  using units::Celsius;
  using units::Megahertz;
  using units::Watts;
  gpu::StatusSnapshot s;
  s.index = j.at("index").get<unsigned>();
  s.name = j.at("name").get<std::string>();
  s.uuid = j.at("uuid").get<std::string>();
  s.unavailable_code = j.at("unavailable_code").get<int>();
  s.pstate = reading_from<int>(j.at("pstate"), [](const json& v) { return v.get<int>(); });
  s.sm_clock = quantity_from<Megahertz>(j.at("sm_clock"));
  s.sm_max = quantity_from<Megahertz>(j.at("sm_max"));
  s.memory_clock = quantity_from<Megahertz>(j.at("memory_clock"));
  s.memory_max = quantity_from<Megahertz>(j.at("memory_max"));
  s.app_sm_clock = quantity_from<Megahertz>(j.at("app_sm_clock"));
  s.app_memory_clock = quantity_from<Megahertz>(j.at("app_memory_clock"));
  s.default_app_sm_clock = quantity_from<Megahertz>(j.at("default_app_sm_clock"));
  s.default_app_memory_clock = quantity_from<Megahertz>(j.at("default_app_memory_clock"));
  s.power_draw = quantity_from<Watts>(j.at("power_draw"));
  s.power_limit = quantity_from<Watts>(j.at("power_limit"));
  s.default_power_limit = quantity_from<Watts>(j.at("default_power_limit"));
  s.temperature = quantity_from<Celsius>(j.at("temperature"));
  s.slowdown_temperature = quantity_from<Celsius>(j.at("slowdown_temperature"));
  s.utilization = reading_from<gpu::Utilization>(j.at("utilization"), [](const json& v) {
    return gpu::Utilization{units::Ratio(v.at("gpu").get<double>()),
                            units::Ratio(v.at("memory").get<double>())};
  });
  s.clock_reasons = reading_from<gpu::ClockReasons>(j.at("clock_reasons"), [](const json& v) {
    return gpu::ClockReasons(v.get<std::uint64_t>());
  });
  s.persistence_mode =
      reading_from<bool>(j.at("persistence_mode"), [](const json& v) { return v.get<bool>(); });
  auto link = [](const json& v) {
    return gpu::PcieLink{v.at("generation").get<unsigned>(), v.at("width").get<unsigned>()};
  };
  s.pcie_link = reading_from<gpu::PcieLink>(j.at("pcie_link"), link);
  s.pcie_max = reading_from<gpu::PcieLink>(j.at("pcie_max"), link);
  if (j.contains("retired_pages")) {  // absent from a service of before pre-Ampere support
    s.retired_pages = reading_from<gpu::RetiredPages>(j.at("retired_pages"), [](const json& v) {
      return gpu::RetiredPages{v.at("multiple_sbe").get<unsigned>(), v.at("dbe").get<unsigned>(),
                               v.at("pending").get<bool>()};
    });
  }
  return s;
}

json to_json(const gpu::DeviceKey& k) {
  return json{{"index", k.index}, {"uuid", k.uuid}, {"pci_bus_id", k.bus_id}};
}

gpu::DeviceKey device_key_from_json(const json& j) {
  return {j.at("index").get<unsigned>(), j.at("uuid").get<std::string>(),
          j.value("pci_bus_id", std::string())};
}

json to_json(const telemetry::FastSample& s, telemetry::TimePoint now) {
  json j;
  j["t"] = seconds(s.time - now);
  telemetry::for_each_fast_field([&](const auto& f) { put(j, f.key, s.*f.member); });
  if (s.clock_reasons) j["clock_reasons"] = s.clock_reasons->bits();
  if (s.pstate) j["pstate"] = *s.pstate;
  return j;
}

json to_json(const telemetry::SlowSample& s, telemetry::TimePoint now) {
  json j;
  j["t"] = seconds(s.time - now);
  telemetry::for_each_slow_field([&](const auto& f) { put(j, f.key, s.*f.member); });
  if (s.gpm) {
    json g;
    for (const auto& f : telemetry::fields::kGpm) put(g, f.key, (*s.gpm).*f.member);
    j["gpm"] = g;
  }
  if (!s.nvlinks.empty()) {
    json links = json::array();
    for (const auto& l : s.nvlinks) {
      json k;
      k["link"] = l.link;
      if (l.active) k["active"] = *l.active;
      for (const auto& f : telemetry::fields::kNvLink) put(k, f.key, l.*f.member);
      links.push_back(std::move(k));
    }
    j["nvlinks"] = std::move(links);
    if (!s.nvlink_errors_fresh) j["nvlink_errors_cached"] = true;
    if (!s.nvlink_data_fresh) j["nvlink_data_cached"] = true;
  }
  return j;
}

namespace {

template <class Q>
void get(const json& j, std::string_view key, std::optional<Q>& q) {
  if (auto it = j.find(key); it != j.end() && it->is_number()) q = Q(it->get<double>());
}

template <class T>
void get_count(const json& j, std::string_view key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && it->is_number()) v = it->get<T>();
}

telemetry::TimePoint at(const json& j, telemetry::TimePoint now) {
  return now + std::chrono::duration_cast<telemetry::Duration>(
                   std::chrono::duration<double>(j.value("t", 0.0)));
}

void get(const json& j, std::string_view key, std::optional<std::uint64_t>& n) {
  get_count(j, key, n);
}
void get(const json& j, std::string_view key, std::optional<std::chrono::nanoseconds>& d) {
  if (auto it = j.find(key); it != j.end() && it->is_number())
    d = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(it->get<double>()));
}

}  // namespace

telemetry::FastSample fast_sample_from_json(const json& j, telemetry::TimePoint now) {
  telemetry::FastSample s;
  s.time = at(j, now);
  telemetry::for_each_fast_field([&](const auto& f) { get(j, f.key, s.*f.member); });
  if (auto it = j.find("clock_reasons"); it != j.end() && it->is_number_unsigned())
    s.clock_reasons = gpu::ClockReasons(it->get<std::uint64_t>());
  get_count(j, "pstate", s.pstate);
  return s;
}

telemetry::SlowSample slow_sample_from_json(const json& j, telemetry::TimePoint now) {
  telemetry::SlowSample s;
  s.time = at(j, now);
  telemetry::for_each_slow_field([&](const auto& f) { get(j, f.key, s.*f.member); });
  if (auto it = j.find("gpm"); it != j.end() && it->is_object()) {
    telemetry::GpmActivity g;
    for (const auto& f : telemetry::fields::kGpm) get(*it, f.key, g.*f.member);
    s.gpm = g;
  }
  if (auto it = j.find("nvlinks"); it != j.end() && it->is_array()) {
    for (const auto& k : *it) {
      if (!k.is_object() || !k.contains("link") || !k["link"].is_number_unsigned()) continue;
      telemetry::NvLinkSample l;
      l.link = k["link"].get<unsigned>();
      if (auto a = k.find("active"); a != k.end() && a->is_boolean()) l.active = a->get<bool>();
      for (const auto& f : telemetry::fields::kNvLink) get_count(k, f.key, l.*f.member);
      s.nvlinks.push_back(l);
      if (s.nvlinks.size() >= 64) break;  // a GPU has at most 18; a bigger list is not ours
    }
    if (auto c = j.find("nvlink_errors_cached"); c != j.end() && c->is_boolean())
      s.nvlink_errors_fresh = !c->get<bool>();
    if (auto c = j.find("nvlink_data_cached"); c != j.end() && c->is_boolean())
      s.nvlink_data_fresh = !c->get<bool>();
  }
  return s;
}

json to_json(const gpu::GpuEvent& e, telemetry::TimePoint now) {
  json j;
  j["t"] = seconds(e.time - now);
  j["kind"] = std::string(gpu::to_string(e.kind));
  if (e.kind == gpu::EventKind::xid) j["xid"] = e.xid;
  return j;
}

std::optional<gpu::EventKind> event_kind_from_string(std::string_view name) {
  for (auto kind :
       {gpu::EventKind::xid, gpu::EventKind::double_bit_ecc, gpu::EventKind::single_bit_ecc}) {
    if (gpu::to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

gpu::GpuEvent event_from_json(const json& j, unsigned gpu, telemetry::TimePoint now) {
  gpu::GpuEvent e;
  e.gpu = gpu;
  const auto name = j.at("kind").get<std::string>();
  const auto kind = event_kind_from_string(name);
  if (!kind) throw std::invalid_argument("unknown event kind '" + name + "'");
  e.kind = *kind;
  e.xid = j.value("xid", std::uint64_t{0});
  e.time = at(j, now);
  return e;
}

json to_json(const telemetry::Summary& s, telemetry::TimePoint now) {
  json j;
  j["from"] = seconds(s.from - now);
  j["to"] = seconds(s.to - now);
  j["fast_samples"] = s.fast_samples;
  j["slow_samples"] = s.slow_samples;
  put(j, "energy_joules", s.energy);
  j["energy_source"] = std::string(telemetry::to_string(s.energy_source));
  put(j, "power_mean_watts", s.power_mean);
  put(j, "power_peak_watts", s.power_peak);
  auto clocks = [](const std::optional<telemetry::ClockStatistics>& c) {
    if (!c) return json();
    return json{{"p5", c->p5.value()},     {"median", c->median.value()}, {"p95", c->p95.value()},
                {"mean", c->mean.value()}, {"min", c->min.value()},       {"max", c->max.value()}};
  };
  j["sm_clock_mhz"] = clocks(s.sm_clock);
  j["memory_clock_mhz"] = clocks(s.memory_clock);
  json reasons = json::array();
  for (const auto& r : s.clock_reasons)
    reasons.push_back(
        {{"reason", gpu::ClockReasons(r.bit).names()}, {"fraction", r.fraction.value()}});
  j["clock_reasons"] = reasons;
  put(j, "gpu_utilization_ratio", s.gpu_utilization);
  put(j, "memory_utilization_ratio", s.memory_utilization);
  put(j, "temperature_max_celsius", s.temperature_max);
  put(j, "power_violation_ratio", s.power_violation);
  put(j, "thermal_violation_ratio", s.thermal_violation);
  j["lost"] = s.lost;
  return j;
}

json to_json(const control::ChangeReport& r) {
  json settings = json::array();
  for (const auto& s : r.settings)
    settings.push_back({{"gpu", s.gpu},
                        {"uuid", s.uuid},
                        {"setting", control::key_of(s.setting)},
                        {"before", s.before},
                        {"target", s.target},
                        {"read_back", s.read_back},
                        {"result", control::to_string(s.outcome)},
                        {"error", s.error}});
  return {{"settings", settings},
          {"notes", r.notes},
          {"exit", static_cast<int>(r.exit)},
          {"error", r.error},
          {"hint", r.hint}};
}

control::ChangeReport change_report_from_json(const json& j) {
  control::ChangeReport r;
  for (const auto& s : j.at("settings")) {
    control::SettingReport x;
    x.gpu = s.at("gpu").get<unsigned>();
    x.uuid = s.at("uuid").get<std::string>();
    const auto key = s.at("setting").get<std::string>();
    const auto setting = control::setting_by_key(key);
    if (!setting) throw std::runtime_error("unknown setting " + key);
    x.setting = *setting;
    x.before = s.at("before").get<std::string>();
    x.target = s.at("target").get<std::string>();
    x.read_back = s.at("read_back").get<std::string>();
    const auto result = s.at("result").get<std::string>();
    bool known = false;
    for (auto o :
         {control::Outcome::unchanged, control::Outcome::would_change, control::Outcome::changed,
          control::Outcome::failed, control::Outcome::not_attempted, control::Outcome::rolled_back,
          control::Outcome::rollback_failed}) {
      if (control::to_string(o) == result) {
        x.outcome = o;
        known = true;
      }
    }
    if (!known) throw std::runtime_error("unknown result " + result);
    x.error = s.at("error").get<std::string>();
    r.settings.push_back(std::move(x));
  }
  r.notes = j.at("notes").get<std::vector<std::string>>();
  r.exit = static_cast<ExitCode>(j.at("exit").get<int>());
  r.error = j.at("error").get<std::string>();
  r.hint = j.at("hint").get<std::string>();
  return r;
}

}  // namespace gpuclk::serve
