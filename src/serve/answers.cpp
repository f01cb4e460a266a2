#include "serve/answers.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpu/simulator.h"
#include "serve/attribution_json.h"
#include "serve/protocol.h"
#include "serve/service.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

using nlohmann::json;
using telemetry::Duration;

json ok_response() { return json{{"v", kProtocolVersion}, {"ok", true}}; }

// A request's error as its response: an Error with its exit code and hint, anything else (a
// JSON type error, say) as a bad request.
json error_for(const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e)) {
    auto r = error_response(err->what(), static_cast<int>(err->code()));
    if (!err->hint().empty()) r["hint"] = err->hint();
    return r;
  }
  return error_response(std::string("bad request: ") + e.what(),
                        static_cast<int>(ExitCode::bad_argument));
}

// A request's window: "seconds" (default 60), at most what the history keeps.
Duration window_of(const json& request, Duration longest) {
  // A week at most, as --history: longer windows are cut to the history anyway.
  const double s = number_of(request, "seconds", 60.0, 0, 7 * 86400.0);
  if (!(s > 0)) throw bad_argument(fmt::format("seconds must be > 0, got {}", s));
  auto d = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
  return std::min(d, longest);
}

}  // namespace

Answers::Answers(const Service& service, telemetry::Sampler& sampler, Streams& streams,
                 const gpu::DeviceSet& devices)
    : service_(service), sampler_(sampler), streams_(streams), devices_(devices) {}

Reply Answers::answer(const json& request, const Peer& peer) {
  try {
    // Anything else, and a request in another version, handle() answers (or refuses).
    if (!request.is_object() || request.value("v", kProtocolVersion) != kProtocolVersion)
      return {handle(request, peer), nullptr};
    const auto what = request.value("request", std::string());
    if (what == "stream") return {json(), open_stream(request)};
    // The answers of the node state alone, shared by every client until the next refresh.
    if (what == "status") {
      const auto s = service_.state();
      return {json(), nullptr, serialized(what, *s, [&] { return status_response(*s); })};
    }
    if (what == "view") {
      const auto name = request.value("name", std::string());
      const auto s = service_.ask_view(name);
      if (!s->views.count(name)) return {json(), wait_for_view(name)};
      return {json(), nullptr,
              serialized("view " + name, *s, [&] { return view_response(name, *s); })};
    }
  } catch (const std::exception& e) {
    return {error_for(e), nullptr};
  }
  return {handle(request, peer), nullptr};
}

json Answers::handle(const json& request, const Peer& peer) const {
  try {
    if (!request.is_object()) throw bad_argument("a request is a JSON object");
    const int v = request.value("v", kProtocolVersion);
    if (v != kProtocolVersion)
      throw bad_argument(fmt::format("protocol version {} not spoken", v),
                         fmt::format("this service speaks version {}", kProtocolVersion));
    const auto what = request.value("request", std::string());
    if (what == "hello") return hello(peer);
    if (what == "status") return status_response(*service_.state());
    if (what == "view") {
      const auto name = request.value("name", std::string());
      return view_response(name, *service_.state_with_view(name));
    }
    if (what == "history") return history_response(request);
    if (what == "summary") return summary_response(request);
    if (what == "snapshot") return snapshot_response(request);
    if (what == "processes") return processes_response(request);
    if (what == "stream") throw bad_argument("a stream is served on the socket only");
    throw bad_argument(fmt::format("unknown request '{}'", what),
                       "valid: hello, status, view, history, summary, snapshot, processes, stream");
  } catch (const std::exception& e) {
    return error_for(e);
  }
}

std::unique_ptr<Stream> Answers::open_stream(const json& request) {
  const auto asked = streams_.parse(request);
  auto positions = this->positions(request);
  std::vector<gpu::DeviceKey> keys;
  for (const auto& f : service_.facts()) keys.push_back(f.key);
  return streams_.open(asked, std::move(positions), std::move(keys));
}

// A view's first request after an idle spell, on the socket: its answer waits for the refresh
// that reads the view. One line, built as answer() builds it.
std::unique_ptr<Stream> Answers::wait_for_view(const std::string& name) const {
  return std::make_unique<ViewWait>(
      name,
      [this, name]() -> std::shared_ptr<const std::string> {
        const auto s = service_.state();
        if (!s->views.count(name)) return nullptr;
        return serialized("view " + name, *s, [&] { return view_response(name, *s); });
      },
      [this] { return service_.running(); });
}

std::shared_ptr<const std::string> Answers::serialized(const std::string& key, const NodeState& s,
                                                       const std::function<json()>& build) const {
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end() && it->second.first == s.generation)
      return it->second.second;
  }
  auto text = std::make_shared<const std::string>(build().dump());
  std::lock_guard lock(mutex_);
  cache_[key] = {s.generation, text};
  return text;
}

json Answers::keys_json() const {
  json keys = json::array();
  for (const auto& f : service_.facts()) keys.push_back(to_json(f.key));
  return keys;
}

std::vector<std::size_t> Answers::positions(const json& request) const {
  const auto& facts = service_.facts();
  std::vector<std::size_t> out;
  if (!request.contains("gpus")) {
    for (std::size_t i = 0; i < facts.size(); ++i) out.push_back(i);
    return out;
  }
  const auto& gpus = request.at("gpus");
  if (!gpus.is_array())
    throw bad_argument(fmt::format("bad gpus {}", gpus.dump().substr(0, 80)),
                       "give an array of GPU indexes, e.g. [0, 1]");
  for (const auto& g : gpus) {
    const auto index = gpu_index_of(g);
    auto it = std::find_if(facts.begin(), facts.end(),
                           [&](const GpuFacts& f) { return f.key.index == index; });
    if (it == facts.end())
      throw Error(ExitCode::gpu_not_found, fmt::format("no GPU with index {}", index));
    out.push_back(static_cast<std::size_t>(it - facts.begin()));
  }
  return out;
}

json Answers::hello(const Peer& peer) const {
  const auto& options = service_.options();
  auto r = ok_response();
  r["service"] = "gpuclk serve";
  r["simulated"] = options.simulated;
  r["sim_state"] = options.sim_state;
  r["interval_seconds"] = std::chrono::duration<double>(options.interval).count();
  r["slow_interval_seconds"] =
      std::chrono::duration<double>(sampler_.options().slow_interval).count();
  r["history_seconds"] = std::chrono::duration<double>(options.history).count();
  r["http"] = options.http_listen;
  r["driver_version"] = service_.driver_version();
  r["gpus"] = keys_json();
  r["views"] = json::array();
  for (const auto& v : service_.views()) r["views"].push_back(v.name);
  r["peer"] = {{"pid", peer.pid}, {"uid", peer.uid}, {"gid", peer.gid}};
  if (!options.delegation_policy.empty()) r["delegation"] = options.delegation_policy;
  return r;
}

json Answers::status_response(const NodeState& s) const {
  const auto& options = service_.options();
  auto r = ok_response();
  r["simulated"] = options.simulated;
  r["sim_state"] = options.sim_state;
  // What the simulated node's time does when it is not real time ("time frozen at 60 s
  // (…)"), as a direct `gpuclk status` says it.
  if (!options.simulated.empty()) {
    if (const auto note = gpu::simulator_time_note(devices_.api()); !note.empty())
      r["sim_time_note"] = note;
  }
  r["gpus"] = keys_json();
  r["status"] = json::array();
  for (const auto& g : s.status) r["status"].push_back(to_json(g));
  return r;
}

json Answers::view_response(const std::string& name, const NodeState& s) const {
  auto r = ok_response();
  r["simulated"] = service_.options().simulated;
  r["sim_state"] = service_.options().sim_state;
  r["gpus"] = keys_json();
  r["rows"] = s.views.at(name);
  if (auto node = s.view_nodes.find(name); node != s.view_nodes.end()) r["node"] = node->second;
  return r;
}

json Answers::history_response(const json& request) const {
  const auto resolution = string_of(request, "resolution", "1s");
  if (resolution != "1s" && resolution != "interval")
    throw bad_argument(fmt::format("unknown resolution '{}'", resolution), "valid: 1s, interval");
  const bool fine = resolution == "interval";
  // "slow": true adds the slow tier to the 1 s history too (top's findings: NVLink, ECC, ...).
  const bool with_slow = fine || flag_of(request, "slow", false);
  const auto window =
      window_of(request, fine ? std::chrono::minutes(10) : service_.options().history);
  const auto now = sampler_.now();
  auto r = ok_response();
  r["resolution"] = resolution;
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    json g = to_json(service_.facts()[pos].key);
    json fast = json::array(), slow = json::array();
    auto samples =
        fine ? sampler_.fast_samples(pos, now - window, now) : service_.history(pos, window);
    for (const auto& s : samples) fast.push_back(to_json(s, now));
    if (with_slow) {
      for (const auto& s : sampler_.slow_samples(pos, now - window, now))
        slow.push_back(to_json(s, now));
      g["slow"] = slow;
    }
    g["samples"] = fast;
    // The NVML events kept over the window, and the kinds watched (empty: none, the GPU has no
    // events or was lost when the service started).
    json events = json::array(), watched = json::array();
    for (const auto& e : service_.events(pos, window)) events.push_back(to_json(e, now));
    for (auto kind : service_.events_watched(pos))
      watched.push_back(std::string(gpu::to_string(kind)));
    g["events"] = events;
    g["events_watched"] = watched;
    r["gpus"].push_back(g);
  }
  return r;
}

json Answers::summary_response(const json& request) const {
  const auto window = window_of(request, std::chrono::minutes(10));
  const auto now = sampler_.now();
  auto r = ok_response();
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    json g = to_json(service_.facts()[pos].key);
    g["summary"] = to_json(sampler_.summary(pos, now - window, now), now);
    r["gpus"].push_back(g);
  }
  return r;
}

json Answers::snapshot_response(const json& request) const {
  const auto& options = service_.options();
  // stat's window edges: a counter read there, made by the slow threads (not on this path).
  if (request.value("read_counters", false)) sampler_.read_slow_now();
  auto snap = sampler_.snapshot();
  auto r = ok_response();
  r["simulated"] = options.simulated;  // clients check they asked the node they meant
  r["sim_state"] = options.sim_state;
  r["tick"] = snap.tick;
  // The sampler's clock now, in the stream lines' time base: a client reads a stream up to it.
  r["time"] = std::chrono::duration<double>(snap.time.time_since_epoch()).count();
  // Its time now, when the simulator's exact energy below is read: stat's window edges.
  r["now"] = std::chrono::duration<double>(sampler_.now().time_since_epoch()).count();
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    const auto& g = snap.gpus.at(pos);
    json j = to_json(service_.facts()[pos].key);
    if (g.fast) j["fast"] = to_json(*g.fast, snap.time);
    if (g.slow) j["slow"] = to_json(*g.slow, snap.time);
    j["lost"] = g.health.lost;
    j["read_errors"] = g.health.read_errors;
    // The simulator's exact energy counter, which only a process that loads the simulator can
    // read: `stat` through the service shows it beside NVML's (its "simulator truth").
    if (!options.simulated.empty()) {
      if (const auto truth = gpu::simulator_energy(devices_[pos]))
        j["simulator_energy_j"] = truth->value();
    }
    r["gpus"].push_back(j);
  }
  auto t = sampler_.timing();
  auto ms = [](Duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  r["timing"] = {{"ticks", t.ticks},
                 {"missed_ticks", t.missed_ticks},
                 {"lateness_p50_ms", ms(t.lateness_p50)},
                 {"lateness_p99_ms", ms(t.lateness_p99)},
                 {"lateness_max_ms", ms(t.lateness_max)},
                 {"tick_cost_mean_ms", ms(t.tick_cost_mean)}};
  return r;
}

json Answers::processes_response(const json& request) const {
  std::optional<std::string> owner;
  if (request.contains("owner")) {
    owner = request.at("owner").get<std::string>();
    if (!host::parse_owner_key(*owner)) {
      throw bad_argument(
          fmt::format("'{}' names no owner", *owner),
          "slurm:JOB, pod:UID (or pod:NAMESPACE/NAME), container:ID, session:N or process:PID");
    }
  }
  const auto now = sampler_.now();
  auto r = ok_response();
  r.update(attribution_json(service_.attribution()->view(), now, owner));
  r["gpus"] = keys_json();
  if (owner && r.at("owners").empty()) {
    throw Error(ExitCode::gpu_not_found,
                fmt::format("this service saw no process of {} on its GPUs", *owner),
                "it keeps an owner a day after its last process ended; gpuclk ps lists them");
  }
  // The time resolution of the figures: the slow tier's interval now.
  const auto& so = sampler_.options();
  r["interval_s"] = std::chrono::duration<double>(so.slow_interval).count() *
                    static_cast<double>(so.slow_idle_every);
  return r;
}

}  // namespace gpuclk::serve
