#include "serve/attribution_json.h"

#include <fmt/format.h>

#include "gpu/clock_reasons.h"
#include "util/error.h"

namespace gpuclk::serve {

using attribution::AttributionView;
using attribution::GpuBooks;
using attribution::kSplitCount;
using attribution::OwnerUse;
using attribution::ProcessUse;
using attribution::Split;
using attribution::Usage;

namespace {

using nlohmann::json;

double seconds_before(telemetry::TimePoint now, telemetry::TimePoint then) {
  return std::max(0.0, std::chrono::duration<double>(now - then).count());
}

telemetry::TimePoint before(telemetry::TimePoint now, double seconds) {
  return now -
         std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds));
}

// The reasons' keys in bit order (gpu::clock_reasons() numbers bits 0..8 that way).
std::string_view reason_key(std::size_t bit) {
  for (const auto& r : gpu::clock_reasons()) {
    if (r.bit == (std::uint64_t{1} << bit)) return r.key;
  }
  return {};
}

json usage_json(const Usage& u) {
  json j{{"energy_j", u.energy_j}, {"context_s", u.context_s}, {"busy_s", u.busy_s}};
  if (auto mhz = u.mean_sm_mhz()) {
    j["mean_sm_mhz"] = *mhz;
    j["clock_s"] = u.clock_s;
  }
  json held = json::object();
  for (std::size_t bit = 0; bit < u.held_s.size(); ++bit) {
    if (u.held_s[bit] > 0 && !reason_key(bit).empty())
      held[std::string(reason_key(bit))] = u.held_s[bit];
  }
  j["held_s"] = held;
  return j;
}

Usage usage_from(const json& j) {
  Usage u;
  u.energy_j = j.at("energy_j").get<double>();
  u.context_s = j.at("context_s").get<double>();
  u.busy_s = j.at("busy_s").get<double>();
  if (j.contains("mean_sm_mhz")) {
    u.clock_s = j.at("clock_s").get<double>();
    u.clock_mhz_s = j.at("mean_sm_mhz").get<double>() * u.clock_s;
  }
  for (const auto& [key, value] : j.at("held_s").items()) {
    for (std::size_t bit = 0; bit < u.held_s.size(); ++bit) {
      if (reason_key(bit) == key) u.held_s[bit] = value.get<double>();
    }
  }
  return u;
}

void owner_fields(json& j, const host::Owner& o) {
  j["owner"] = host::owner_key(o);
  j["owner_kind"] = std::string(host::to_string(o.kind));
  j["owner_id"] = o.id;
  j["user"] = o.user;
  // A pod's names as the kubelet gives them (pod_names.h); absent while unknown.
  if (!o.pod_name.empty()) {
    j["pod_namespace"] = o.pod_namespace;
    j["pod_name"] = o.pod_name;
    if (!o.container_name.empty()) j["container_name"] = o.container_name;
  }
}

// `filter` names `o`: its key, or for a pod "pod:NAMESPACE/NAME" as the kubelet names it.
bool owner_matches(const host::Owner& o, const std::string& filter) {
  if (host::owner_key(o) == filter) return true;
  return o.kind == host::OwnerKind::kubernetes_pod && !o.pod_name.empty() &&
         filter == "pod:" + o.pod_namespace + "/" + o.pod_name;
}

host::Owner owner_from(const json& j) {
  auto o = host::parse_owner_key(j.at("owner").get<std::string>());
  if (!o) throw Error(ExitCode::other, "bad owner in the service's answer");
  o->user = j.value("user", std::string());
  o->pod_namespace = j.value("pod_namespace", std::string());
  o->pod_name = j.value("pod_name", std::string());
  o->container_name = j.value("container_name", std::string());
  return *o;
}

Split split_from(const std::string& text) {
  for (Split s : {Split::sole, Split::sm, Split::memory, Split::equal}) {
    if (to_string(s) == text) return s;
  }
  return Split::equal;
}

}  // namespace

json attribution_json(const AttributionView& view, telemetry::TimePoint now,
                      const std::optional<std::string>& owner) {
  json processes = json::array();
  for (const auto& p : view.processes) {
    if (owner && !owner_matches(p.owner, *owner)) continue;
    json j{{"pid", p.pid},
           {"gpu", p.gpu_index},
           {"name", p.name},
           {"running", p.running},
           {"age_s", seconds_before(now, p.first_seen)},
           {"idle_s", seconds_before(now, p.last_seen)},
           {"share", p.share},
           {"power_w", p.power_w},
           {"split", std::string(to_string(p.split))},
           {"usage", usage_json(p.usage)}};
    owner_fields(j, p.owner);
    if (p.memory) j["memory_bytes"] = p.memory->value();
    if (p.memory_peak) j["memory_peak_bytes"] = p.memory_peak->value();
    processes.push_back(std::move(j));
  }
  json owners = json::array();
  for (const auto& o : view.owners) {
    if (owner && !owner_matches(o.owner, *owner)) continue;
    json j{{"running", o.running},
           {"age_s", seconds_before(now, o.first_seen)},
           {"idle_s", seconds_before(now, o.last_seen)},
           {"pids", o.pids},
           {"usage", usage_json(o.usage)}};
    owner_fields(j, o.owner);
    json gpus = json::array();
    for (const auto& [index, u] : o.by_gpu)
      gpus.push_back({{"gpu", index}, {"usage", usage_json(u)}});
    j["gpus"] = gpus;
    owners.push_back(std::move(j));
  }
  json answer{{"processes", processes}, {"owners", owners}};
  if (!owner) {
    json users = json::array();
    for (const auto& [user, u] : view.users)
      users.push_back({{"user", user}, {"usage", usage_json(u)}});
    answer["users"] = users;
    json books = json::array();
    for (const auto& b : view.gpus) {
      json split = json::object();
      for (std::size_t k = 0; k < kSplitCount; ++k)
        split[std::string(to_string(static_cast<Split>(k)))] = b.split_j[k];
      json book{{"counted_j", b.counted_j},
                {"idle_j", b.idle_j},
                {"unknown_j", b.unknown_j},
                {"split_j", split},
                {"intervals", b.intervals}};
      if (b.first_counter_j) book["first_counter_j"] = *b.first_counter_j;
      if (b.last_counter_j) book["last_counter_j"] = *b.last_counter_j;
      books.push_back(std::move(book));
    }
    answer["books"] = books;
  }
  return answer;
}

AttributionView attribution_from_json(const json& answer, telemetry::TimePoint now) {
  try {
    AttributionView v;
    for (const auto& j : answer.at("processes")) {
      ProcessUse p;
      p.pid = j.at("pid").get<unsigned>();
      p.gpu_index = j.at("gpu").get<unsigned>();
      p.name = j.value("name", std::string());
      p.owner = owner_from(j);
      p.running = j.at("running").get<bool>();
      p.first_seen = before(now, j.at("age_s").get<double>());
      p.last_seen = before(now, j.at("idle_s").get<double>());
      p.share = j.at("share").get<double>();
      p.power_w = j.at("power_w").get<double>();
      p.split = split_from(j.at("split").get<std::string>());
      p.usage = usage_from(j.at("usage"));
      if (j.contains("memory_bytes")) p.memory = units::Bytes(j.at("memory_bytes").get<double>());
      if (j.contains("memory_peak_bytes"))
        p.memory_peak = units::Bytes(j.at("memory_peak_bytes").get<double>());
      v.processes.push_back(std::move(p));
    }
    for (const auto& j : answer.at("owners")) {
      OwnerUse o;
      o.owner = owner_from(j);
      o.running = j.at("running").get<bool>();
      o.first_seen = before(now, j.at("age_s").get<double>());
      o.last_seen = before(now, j.at("idle_s").get<double>());
      o.pids = j.at("pids").get<std::vector<unsigned>>();
      o.usage = usage_from(j.at("usage"));
      for (const auto& g : j.at("gpus"))
        o.by_gpu[g.at("gpu").get<unsigned>()] = usage_from(g.at("usage"));
      v.owners.push_back(std::move(o));
    }
    for (const auto& j : answer.value("users", json::array()))
      v.users[j.at("user").get<std::string>()] = usage_from(j.at("usage"));
    for (const auto& j : answer.value("books", json::array())) {
      GpuBooks b;
      b.counted_j = j.at("counted_j").get<double>();
      b.idle_j = j.at("idle_j").get<double>();
      b.unknown_j = j.at("unknown_j").get<double>();
      b.intervals = j.at("intervals").get<std::uint64_t>();
      if (j.contains("first_counter_j")) b.first_counter_j = j.at("first_counter_j").get<double>();
      if (j.contains("last_counter_j")) b.last_counter_j = j.at("last_counter_j").get<double>();
      for (std::size_t k = 0; k < kSplitCount; ++k)
        b.split_j[k] = j.at("split_j").value(std::string(to_string(static_cast<Split>(k))), 0.0);
      v.gpus.push_back(b);
    }
    return v;
  } catch (const json::exception& e) {
    throw Error(ExitCode::other,
                fmt::format("malformed processes answer from the service: {}", e.what()));
  }
}

}  // namespace gpuclk::serve
