#include "serve/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "gpu/simulator.h"
#include "rules/process_owners.h"
#include "serve/attribution_json.h"
#include "serve/findings.h"
#include "serve/protocol.h"
#include "util/error.h"
#include "util/thread_name.h"

namespace gpuclk::serve {
namespace {

using telemetry::Duration;
using telemetry::Field;
using telemetry::FieldSet;
using telemetry::TimePoint;

constexpr FieldSet kStreamOnDemand{Field::bar1_used, Field::protected_memory_used,
                                   Field::media_utilization, Field::pcie_throughput};
constexpr telemetry::Duration kServiceNvLinkErrorPeriod = std::chrono::minutes(1);
// One NVML event wait of the event thread (an event ends it at once).
constexpr std::chrono::milliseconds kEventWait{250};
// The longest a view's first request waits for the refresh that reads it (the client gives up
// after 10 s).
constexpr std::chrono::seconds kViewWait{5};

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r.optional();
}

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

Service::Service(gpu::DeviceSet& devices, const Clock& clock, ServiceOptions options,
                 std::vector<View> views)
    : devices_(devices), clock_(clock), options_(std::move(options)), views_(std::move(views)) {
  telemetry::SamplerOptions so;
  so.fast_interval = options_.interval;
  // PCIe replays for /metrics and dmon -s e (one cheap read a second); dmon's other extra
  // columns only while a dmon streams them (`stream`): media utilization and BAR1/protected
  // memory are four and two more reads per tick, PCIe throughput 2 × 20 ms per slow read.
  // The processes and their utilization samples on the slow tier, for attribution (two calls a
  // GPU; docs/serve.md measures them).
  so.fields = telemetry::FieldSet::standard() |
              telemetry::FieldSet{telemetry::Field::pcie_replay, telemetry::Field::nvlink,
                                  telemetry::Field::processes};
  so.on_demand = kStreamOnDemand;
  so.slow_idle_every = std::max(1u, options_.counters_every);
  // The sampler's own rings: 10 min at the sampling interval (fast) and at 1 s (slow).
  so.fast_capacity = static_cast<std::size_t>(std::chrono::minutes(10) / options_.interval) + 1;
  so.slow_capacity = 600;
  std::vector<gpu::Device*> all;
  for (auto& d : devices_) all.push_back(d.get());
  // The NVLink DL error counters every minute, not every 10 s as a command's own sampler reads
  // them: on a 2x H200 NV18 host they were a fifth of the service's CPU (144 calls of ~1.8 ms
  // every 10 s; docs/results/serve_h200x2.md). They count since the driver loaded: a rate over
  // minutes (doctor, alerts) loses nothing.
  sampler_ = std::make_unique<telemetry::Sampler>(
      telemetry::device_sources(all, so.fields, kServiceNvLinkErrorPeriod), clock, so);
  const auto seconds_kept = static_cast<std::size_t>(
      std::chrono::duration_cast<std::chrono::seconds>(options_.history).count());
  second_history_.assign(devices_.size(), telemetry::RingBuffer<telemetry::PackedFastSample>(
                                              std::max<std::size_t>(seconds_kept, 1)));
}

Service::~Service() { stop(); }

void Service::start() {
  driver_version_ = devices_.driver_version().value_or("");
  for (const auto& d : devices_) {
    const auto& id = d->identity();
    const auto& limits = d->clock_limits();
    const auto& ratings = d->ratings();
    GpuFacts f;
    f.key = {d->index(), d->uuid(), d->bus_id()};
    f.name = d->name();
    if (id.compute_capability)
      f.compute_capability =
          fmt::format("{}.{}", id.compute_capability->major, id.compute_capability->minor);
    if (id.arch) f.architecture = std::string(id.arch->family);
    f.memory_total = opt(id.memory_total);
    if (ratings.power_constraints) {
      f.min_power_limit = ratings.power_constraints->min;
      f.max_power_limit = ratings.power_constraints->max;
    }
    f.default_power_limit = opt(ratings.default_power_limit);
    f.max_sm_clock = opt(limits.max(gpu::ClockDomain::sm));
    f.max_memory_clock = opt(limits.max(gpu::ClockDomain::memory));
    facts_.push_back(std::move(f));
  }
  std::vector<unsigned> indexes;
  for (const auto& f : facts_) indexes.push_back(f.key.index);
  attribution_ = std::make_unique<Attribution>(std::move(indexes), [this](unsigned pid) {
    ProcessIdentity id;
    id.owner = rules::process_owner(devices_.api(), pid);
    if (auto name = devices_.process_name(pid)) id.name = *name;
    return id;
  });
  attributed_.assign(facts_.size(), std::nullopt);
  std::vector<std::string> uuids;
  for (const auto& f : facts_) uuids.push_back(f.key.uuid);
  pods_ = std::make_unique<PodNamer>(
      options_.kubelet_socket, options_.list_pod_resources, std::move(uuids),
      [](const std::string& line) { std::cerr << "gpuclk serve: " << line << std::endl; });
  refresh();
  // Xid and ECC events: registered once; a GPU without them (or lost) is left out.
  std::vector<gpu::Device*> all;
  for (auto& d : devices_) all.push_back(d.get());
  watcher_ = std::make_unique<gpu::EventWatcher>(all, clock_);
  events_watched_.assign(devices_.size(), {});
  xid_counts_.assign(devices_.size(), {});
  last_xid_.assign(devices_.size(), std::nullopt);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (auto kinds = watcher_->watched(all[i]->index())) events_watched_[i] = *kinds;
  }
  sampler_->start();
  running_ = true;
  refresher_ = std::thread([this] {
    util::name_this_thread("gpuclk-refresh");
    refresh_loop();
  });
  if (watcher_->any_watched()) {
    event_thread_ = std::jthread([this](const std::stop_token& stop) {
      util::name_this_thread("gpuclk-events");
      event_loop(stop);
    });
  }
}

void Service::event_loop(const std::stop_token& stop) {
  // Waits of kEventWait: stop() returns within one (NVML's wait cannot be interrupted). Each
  // wait that times out wakes the thread; at 100 ms that was 0.07 % of a core on this build
  // machine's VM, at 250 ms it is under 0.03 %.
  while (!stop.stop_requested()) {
    auto e = watcher_->wait(kEventWait);
    if (!e) continue;
    std::lock_guard lock(events_mutex_);
    for (std::size_t i = 0; i < facts_.size(); ++i) {
      if (facts_[i].key.index == e->gpu && e->kind == gpu::EventKind::xid) {
        ++xid_counts_[i][e->xid];
        last_xid_[i] = e->xid;
      }
    }
    events_.push_back(*e);
    while (events_.size() > kEventsKept || events_.front().time < e->time - options_.history)
      events_.pop_front();
  }
}

std::vector<gpu::GpuEvent> Service::events(std::size_t gpu, Duration window) const {
  std::vector<gpu::GpuEvent> out;
  if (gpu >= facts_.size()) return out;
  const auto from = sampler_->now() - window;
  std::lock_guard lock(events_mutex_);
  for (const auto& e : events_) {
    if (e.gpu == facts_[gpu].key.index && e.time >= from) out.push_back(e);
  }
  return out;
}

std::optional<std::uint64_t> Service::last_xid(std::size_t gpu) const {
  std::lock_guard lock(events_mutex_);
  return gpu < last_xid_.size() ? last_xid_[gpu] : std::nullopt;
}

const std::vector<gpu::EventKind>& Service::events_watched(std::size_t gpu) const {
  static const std::vector<gpu::EventKind> none;
  return gpu < events_watched_.size() ? events_watched_[gpu] : none;
}

std::map<std::uint64_t, std::uint64_t> Service::xid_counts(std::size_t gpu) const {
  std::lock_guard lock(events_mutex_);
  return gpu < xid_counts_.size() ? xid_counts_[gpu] : std::map<std::uint64_t, std::uint64_t>{};
}

void Service::stop() {
  if (!running_.exchange(false)) return;
  {
    std::lock_guard lock(stop_mutex_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
  // The event thread ends after its current wait (kEventWait): asked first, joined last, so its
  // wait runs out while the others stop.
  event_thread_.request_stop();
  if (refresher_.joinable()) refresher_.join();
  state_cv_.notify_all();  // a view request waiting for a refresh gives up
  sampler_->stop();
  if (event_thread_.joinable()) event_thread_.join();
}

void Service::refresh() {
  auto next = std::make_shared<NodeState>();
  next->time = std::chrono::system_clock::now();
  // Settings: every settings_every refreshes, and at once (and at the next refresh, which sees
  // the write that followed the journal entry) when the watched journal changed.
  bool settings_due = settings_.size() != devices_.size() ||
                      ++refreshes_since_settings_ >= std::max(1u, options_.settings_every);
  if (!options_.settings_watch.empty()) {
    std::error_code ec;
    const auto stamp = std::filesystem::last_write_time(options_.settings_watch, ec);
    const auto seen = ec ? std::filesystem::file_time_type{} : stamp;
    if (seen != settings_watch_stamp_) {
      settings_watch_stamp_ = seen;
      settings_reread_ = 2;
    }
  }
  // A writer's ask (settings_changed): this refresh re-reads, and answers it once published.
  const std::uint64_t asked = settings_asked_.load();
  if (asked > settings_done_) settings_due = true;
  if (settings_reread_ > 0) {
    --settings_reread_;
    settings_due = true;
  }
  if (settings_due) {
    settings_.resize(devices_.size());
    refreshes_since_settings_ = 0;
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto status = gpu::take_status_readings(devices_[i]);
    if (settings_due) gpu::read_status_settings(devices_[i], settings_[i]);
    gpu::copy_status_settings(settings_[i], status);
    next->status.push_back(std::move(status));
  }
  next->findings =
      findings_hold_.update(node_findings(next->status), std::chrono::steady_clock::now(),
                            window_findings(next->status, *sampler_, attribution_.get()));
  for (const auto& view : views_) {
    if (!in_demand(view.name)) continue;
    auto& rows = next->views[view.name];
    if (view.read) {
      for (std::size_t i = 0; i < devices_.size(); ++i) {
        const auto& d = devices_[i];
        // A GPU lost since the service opened it reads as one a fresh process cannot open, so
        // that every view says what --direct says.
        const auto lost = next->status[i].unavailable_code;
        if (lost != 0) {
          const gpu::Device unavailable(d.api(), nullptr, d.index(), lost);
          rows.push_back(view.read(unavailable, devices_));
        } else {
          rows.push_back(view.read(d, devices_));
        }
      }
    }
    if (view.node) next->view_nodes[view.name] = view.node(devices_);
  }
  {
    std::lock_guard lock(state_mutex_);
    next->generation = state_ ? state_->generation + 1 : 1;
    state_ = std::move(next);
    settings_done_ = std::max(settings_done_, asked);
  }
  state_cv_.notify_all();
  if (!sampler_->running()) return;
  attribute();
  // The 1 s history: the latest fast sample of each GPU, once a second.
  auto snap = sampler_->snapshot();
  std::lock_guard lock(history_mutex_);
  for (std::size_t i = 0; i < snap.gpus.size() && i < second_history_.size(); ++i) {
    const auto& fast = snap.gpus[i].fast;
    auto& ring = second_history_[i];
    if (fast && (ring.empty() || ring.back().time < fast->time)) {
      ring.push(telemetry::PackedFastSample(*fast));
    }
  }
}

void Service::attribute() {
  const auto now = sampler_->now();
  for (std::size_t i = 0; i < attributed_.size(); ++i) {
    auto& last = attributed_[i];
    for (auto& s : sampler_->slow_samples(i, last ? last->time : sampler_->started_at(), now)) {
      if (last && s.time <= last->time) continue;
      if (last) {
        const auto fast = sampler_->fast_samples(i, last->time, s.time);
        attribution_->add(i, *last, s, fast);
      }
      last = std::move(s);
    }
  }
  attribution_->prune(now);
  // Pods' names: the kubelet asked when due (at most kKubeletTimeout here), its last answer
  // joined with the processes now.
  if (pods_) pods_->refresh(attribution_->view(), *attribution_, std::chrono::steady_clock::now());
}

std::vector<std::optional<PodName>> Service::gpu_pods() const {
  return pods_ ? pods_->gpus() : std::vector<std::optional<PodName>>{};
}

json Service::processes_response(const json& request) const {
  std::optional<std::string> owner;
  if (request.contains("owner")) {
    owner = request.at("owner").get<std::string>();
    if (!host::parse_owner_key(*owner)) {
      throw bad_argument(
          fmt::format("'{}' names no owner", *owner),
          "slurm:JOB, pod:UID (or pod:NAMESPACE/NAME), container:ID, session:N or process:PID");
    }
  }
  const auto now = sampler_->now();
  auto r = ok_response();
  r.update(attribution_json(attribution_->view(), now, owner));
  r["gpus"] = keys_json();
  if (owner && r.at("owners").empty()) {
    throw Error(ExitCode::gpu_not_found,
                fmt::format("this service saw no process of {} on its GPUs", *owner),
                "it keeps an owner a day after its last process ended; gpuclk ps lists them");
  }
  // The time resolution of the figures: the slow tier's interval now.
  const auto& so = sampler_->options();
  r["interval_s"] = std::chrono::duration<double>(so.slow_interval).count() *
                    static_cast<double>(so.slow_idle_every);
  return r;
}

bool Service::in_demand(const std::string& view) const {
  std::lock_guard lock(state_mutex_);
  auto it = asked_.find(view);
  return it != asked_.end() && std::chrono::steady_clock::now() - it->second < kViewIdle;
}

void Service::refresh_loop() {
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(stop_mutex_);
  while (!stop_requested_) {
    next += options_.refresh;
    if (stop_cv_.wait_until(lock, next, [this] { return stop_requested_ || refresh_wanted_; }) &&
        stop_requested_)
      break;
    refresh_wanted_ = false;
    lock.unlock();
    refresh();
    lock.lock();
    // After a stall, the next refresh comes one interval from now, not in a burst.
    next = std::max(next, std::chrono::steady_clock::now() - options_.refresh);
  }
}

std::shared_ptr<const NodeState> Service::state() const {
  std::lock_guard lock(state_mutex_);
  return state_;
}

double Service::state_age_seconds() const {
  auto s = state();
  if (!s) return 1e9;
  return std::chrono::duration<double>(std::chrono::system_clock::now() - s->time).count();
}

std::vector<telemetry::FastSample> Service::history(std::size_t gpu, Duration window) const {
  auto now = sampler_->now();
  std::lock_guard lock(history_mutex_);
  if (gpu >= second_history_.size()) return {};
  return second_history_[gpu].between(now - window, now,
                                      [](const auto& packed) { return packed.unpack(); });
}

json Service::keys_json() const {
  json keys = json::array();
  for (const auto& f : facts_) keys.push_back(to_json(f.key));
  return keys;
}

std::vector<std::size_t> Service::positions(const json& request) const {
  std::vector<std::size_t> out;
  if (!request.contains("gpus")) {
    for (std::size_t i = 0; i < facts_.size(); ++i) out.push_back(i);
    return out;
  }
  const auto& gpus = request.at("gpus");
  if (!gpus.is_array())
    throw bad_argument(fmt::format("bad gpus {}", gpus.dump().substr(0, 80)),
                       "give an array of GPU indexes, e.g. [0, 1]");
  for (const auto& g : gpus) {
    const auto index = gpu_index_of(g);
    auto it = std::find_if(facts_.begin(), facts_.end(),
                           [&](const GpuFacts& f) { return f.key.index == index; });
    if (it == facts_.end())
      throw Error(ExitCode::gpu_not_found, fmt::format("no GPU with index {}", index));
    out.push_back(static_cast<std::size_t>(it - facts_.begin()));
  }
  return out;
}

json Service::hello(const Peer& peer) const {
  auto r = ok_response();
  r["service"] = "gpuclk serve";
  r["simulated"] = options_.simulated;
  r["sim_state"] = options_.sim_state;
  r["interval_seconds"] = std::chrono::duration<double>(options_.interval).count();
  r["slow_interval_seconds"] =
      std::chrono::duration<double>(sampler_->options().slow_interval).count();
  r["history_seconds"] = std::chrono::duration<double>(options_.history).count();
  r["http"] = options_.http_listen;
  r["driver_version"] = driver_version_;
  r["gpus"] = keys_json();
  r["views"] = json::array();
  for (const auto& v : views_) r["views"].push_back(v.name);
  r["peer"] = {{"pid", peer.pid}, {"uid", peer.uid}, {"gid", peer.gid}};
  if (!options_.delegation_policy.empty()) r["delegation"] = options_.delegation_policy;
  return r;
}

json Service::history_response(const json& request) const {
  const auto resolution = string_of(request, "resolution", "1s");
  if (resolution != "1s" && resolution != "interval")
    throw bad_argument(fmt::format("unknown resolution '{}'", resolution), "valid: 1s, interval");
  const bool fine = resolution == "interval";
  // "slow": true adds the slow tier to the 1 s history too (top's findings: NVLink, ECC, ...).
  const bool with_slow = fine || flag_of(request, "slow", false);
  const auto window = window_of(request, fine ? std::chrono::minutes(10) : options_.history);
  const auto now = sampler_->now();
  auto r = ok_response();
  r["resolution"] = resolution;
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    json g = to_json(facts_[pos].key);
    json fast = json::array(), slow = json::array();
    auto samples = fine ? sampler_->fast_samples(pos, now - window, now) : history(pos, window);
    for (const auto& s : samples) fast.push_back(to_json(s, now));
    if (with_slow) {
      for (const auto& s : sampler_->slow_samples(pos, now - window, now))
        slow.push_back(to_json(s, now));
      g["slow"] = slow;
    }
    g["samples"] = fast;
    // The NVML events kept over the window, and the kinds watched (empty: none, the GPU has no
    // events or was lost when the service started).
    json events = json::array(), watched = json::array();
    for (const auto& e : this->events(pos, window)) events.push_back(to_json(e, now));
    for (auto kind : events_watched(pos)) watched.push_back(std::string(gpu::to_string(kind)));
    g["events"] = events;
    g["events_watched"] = watched;
    r["gpus"].push_back(g);
  }
  return r;
}

json Service::summary_response(const json& request) const {
  const auto window = window_of(request, std::chrono::minutes(10));
  const auto now = sampler_->now();
  auto r = ok_response();
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    json g = to_json(facts_[pos].key);
    g["summary"] = to_json(sampler_->summary(pos, now - window, now), now);
    r["gpus"].push_back(g);
  }
  return r;
}

json Service::snapshot_response(const json& request) const {
  // stat's window edges: a counter read there, made by the slow threads (not on this path).
  if (request.value("read_counters", false)) sampler_->read_slow_now();
  auto snap = sampler_->snapshot();
  auto r = ok_response();
  r["simulated"] = options_.simulated;  // clients check they asked the node they meant
  r["sim_state"] = options_.sim_state;
  r["tick"] = snap.tick;
  // The sampler's clock now, in the stream lines' time base: a client reads a stream up to it.
  r["time"] = std::chrono::duration<double>(snap.time.time_since_epoch()).count();
  // Its time now, when the simulator's exact energy below is read: stat's window edges.
  r["now"] = std::chrono::duration<double>(sampler_->now().time_since_epoch()).count();
  r["gpus"] = json::array();
  for (auto pos : positions(request)) {
    const auto& g = snap.gpus.at(pos);
    json j = to_json(facts_[pos].key);
    if (g.fast) j["fast"] = to_json(*g.fast, snap.time);
    if (g.slow) j["slow"] = to_json(*g.slow, snap.time);
    j["lost"] = g.health.lost;
    j["read_errors"] = g.health.read_errors;
    // The simulator's exact energy counter, which only a process that loads the simulator can
    // read: `stat` through the service shows it beside NVML's (its "simulator truth").
    if (!options_.simulated.empty()) {
      if (const auto truth = gpu::simulator_energy(devices_[pos]))
        j["simulator_energy_j"] = truth->value();
    }
    r["gpus"].push_back(j);
  }
  auto t = sampler_->timing();
  auto ms = [](Duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  r["timing"] = {{"ticks", t.ticks},
                 {"missed_ticks", t.missed_ticks},
                 {"lateness_p50_ms", ms(t.lateness_p50)},
                 {"lateness_p99_ms", ms(t.lateness_p99)},
                 {"lateness_max_ms", ms(t.lateness_max)},
                 {"tick_cost_mean_ms", ms(t.tick_cost_mean)}};
  return r;
}

void Service::settings_changed() {
  const std::uint64_t ticket = ++settings_asked_;
  {
    std::lock_guard wake(stop_mutex_);
    refresh_wanted_ = true;
  }
  stop_cv_.notify_all();
  std::unique_lock lock(state_mutex_);
  state_cv_.wait_for(lock, std::chrono::seconds(2),
                     [&] { return settings_done_ >= ticket || !running_; });
}

std::shared_ptr<const NodeState> Service::ask_view(const std::string& name) const {
  if (std::none_of(views_.begin(), views_.end(), [&](const View& v) { return v.name == name; })) {
    std::string valid;
    for (const auto& v : views_) valid += (valid.empty() ? "" : ", ") + v.name;
    throw bad_argument(fmt::format("no view '{}'", name), "valid: " + valid);
  }
  std::shared_ptr<const NodeState> s;
  {
    std::lock_guard lock(state_mutex_);
    asked_[name] = std::chrono::steady_clock::now();
    s = state_;
  }
  if (!s->views.count(name)) {
    // Not in demand until now: the refresher reads it at once (a refresh of every GPU).
    {
      std::lock_guard wake(stop_mutex_);
      refresh_wanted_ = true;
    }
    stop_cv_.notify_all();
  }
  return s;
}

std::shared_ptr<const NodeState> Service::state_with_view(const std::string& name) const {
  auto s = ask_view(name);
  if (!s->views.count(name)) {
    // The client waits 10 s at most, so 5 s here.
    std::unique_lock lock(state_mutex_);
    state_cv_.wait_for(lock, kViewWait, [&] { return state_->views.count(name) > 0 || !running_; });
    s = state_;
  }
  if (!s->views.count(name))
    throw Error(ExitCode::other, fmt::format("the service did not refresh view '{}'", name));
  return s;
}

// A view's first request after an idle spell, on the socket: its answer waits for the refresh
// that reads the view, without holding up the socket's poll thread (and every other client:
// a dmon's lines, say) meanwhile. One line, built as answer() builds it.
class ViewWait final : public Stream {
 public:
  ViewWait(const Service& service, std::string name)
      : service_(service),
        name_(std::move(name)),
        give_up_(std::chrono::steady_clock::now() + kViewWait) {}
  // Looks for the refresh every 10 ms: the refresh it waits for reads every GPU, so 10 ms more is
  // nothing to the waiting client, and 1000 wake-ups a second of the poll thread bought it nothing.
  std::chrono::nanoseconds interval() const override { return std::chrono::milliseconds(10); }
  std::optional<std::string> next(bool& last) override {
    const auto s = service_.state();
    const bool ready = s->views.count(name_) > 0;
    if (!ready && std::chrono::steady_clock::now() < give_up_ && service_.running_)
      return std::nullopt;
    last = true;
    if (!ready) {
      return error_response(fmt::format("the service did not refresh view '{}'", name_),
                            static_cast<int>(ExitCode::other))
          .dump();
    }
    return *service_.serialized("view " + name_, *s,
                                [&] { return service_.view_response(name_, *s); });
  }

 private:
  const Service& service_;
  std::string name_;
  std::chrono::steady_clock::time_point give_up_;
};

json Service::view_response(const std::string& name, const NodeState& s) const {
  auto r = ok_response();
  r["simulated"] = options_.simulated;
  r["sim_state"] = options_.sim_state;
  r["gpus"] = keys_json();
  r["rows"] = s.views.at(name);
  if (auto node = s.view_nodes.find(name); node != s.view_nodes.end()) r["node"] = node->second;
  return r;
}

json Service::status_response(const NodeState& s) const {
  auto r = ok_response();
  r["simulated"] = options_.simulated;
  r["sim_state"] = options_.sim_state;
  // What the simulated node's time does when it is not real time ("time frozen at 60 s
  // (…)"), as a direct `gpuclk status` says it.
  if (!options_.simulated.empty()) {
    if (const auto note = gpu::simulator_time_note(devices_.api()); !note.empty())
      r["sim_time_note"] = note;
  }
  r["gpus"] = keys_json();
  r["status"] = json::array();
  for (const auto& g : s.status) r["status"].push_back(to_json(g));
  return r;
}

std::shared_ptr<const std::string> Service::serialized(const std::string& key, const NodeState& s,
                                                       const std::function<json()>& build) const {
  {
    std::lock_guard lock(answers_mutex_);
    if (auto it = answers_.find(key); it != answers_.end() && it->second.first == s.generation)
      return it->second.second;
  }
  auto text = std::make_shared<const std::string>(build().dump());
  std::lock_guard lock(answers_mutex_);
  answers_[key] = {s.generation, text};
  return text;
}

// The `stream` request: the sampler's latest readings of the asked GPUs once per interval, for
// `gpuclk dmon` (docs/serve.md). It reads memory only; the poll thread calls next().
class SampleStream final : public Stream {
 public:
  SampleStream(Service& service, std::vector<std::size_t> positions, std::chrono::nanoseconds wall,
               std::uint64_t count, FieldSet wanted, bool every_sample)
      : service_(service),
        positions_(std::move(positions)),
        wall_(wall),
        count_(count),
        wanted_(wanted),
        every_sample_(every_sample) {
    service_.demand(wanted_, +1);
    const auto& sampler = *service_.sampler_;
    opened_ = sampler.now();
    sent_until_.assign(positions_.size(), {opened_, opened_});
    opened_tick_ = sampler.snapshot().tick;
    const auto slow_wall =
        service_.clock_.wall_time_until(service_.clock_.now() + sampler.options().slow_interval);
    give_up_waiting_ = std::chrono::steady_clock::now() + std::chrono::seconds(1) +
                       2 * slow_wall.value_or(sampler.options().slow_interval);
  }
  ~SampleStream() override { service_.demand(wanted_, -1); }

  std::chrono::nanoseconds interval() const override { return wall_; }

  std::optional<std::string> next(bool& last) override {
    const auto& sampler = *service_.sampler_;
    const auto snap = sampler.snapshot();
    if (sent_ == 0 && std::chrono::steady_clock::now() < give_up_waiting_ && !ready(snap))
      return std::nullopt;
    // A snapshot older than two sampling intervals is stale: the service was stopped (SIGSTOP,
    // then SIGCONT) and this thread woke before the sampler's. Its values would go out as the
    // line of now: wait for the sampler's next tick instead, up to 2 s (a sampler that stays
    // late, a driver call that hangs: then the line goes with what there is).
    if (sampler.now() - snap.time > 2 * sampler.options().fast_interval) {
      const auto now = std::chrono::steady_clock::now();
      if (!stale_since_) stale_since_ = now;
      if (now - *stale_since_ < std::chrono::seconds(2)) return std::nullopt;
    }
    stale_since_.reset();
    json line{{"v", kProtocolVersion}, {"ok", true}, {"line", sent_ + 1}};
    // The sampler's time, in seconds of its time base: `t` of the samples is relative to it.
    line["time"] = std::chrono::duration<double>(snap.time.time_since_epoch()).count();
    line["gpus"] = json::array();
    for (std::size_t k = 0; k < positions_.size(); ++k) {
      const auto pos = positions_[k];
      const auto& g = snap.gpus.at(pos);
      json j = to_json(service_.facts_.at(pos).key);
      j["lost"] = g.health.lost;
      if (g.fast) j["fast"] = to_json(*g.fast, snap.time);
      if (g.slow) j["slow"] = to_json(*g.slow, snap.time);
      if (g.previous_slow) j["previous_slow"] = to_json(*g.previous_slow, snap.time);
      // Energy since the stream opened: the counter's last read plus the power since, at both
      // ends (a service nobody streams from reads it every counters_every seconds).
      const auto energy = g.slow ? service_.sampler_->energy_at(pos, snap.time) : std::nullopt;
      if (sent_ == 0) energy_base_.push_back(service_.sampler_->energy_at(pos, opened_));
      if (energy && energy_base_[k]) j["energy_joules"] = (*energy - *energy_base_[k]).value();
      if (every_sample_) add_samples_since_last_line(k, snap.time, j);
      line["gpus"].push_back(std::move(j));
    }
    ++sent_;
    auto text = line.dump();
    if (count_ && sent_ >= count_) {
      last = true;
      text += '\n';
      text += json{{"v", kProtocolVersion}, {"ok", true}, {"end", true}, {"lines", sent_}}.dump();
    }
    return text;
  }

 private:
  // "samples": "all": every fast and slow sample since the previous line (`gpuclk stat` builds
  // its summary from them, as the sampler does), from the rings (10 min deep).
  void add_samples_since_last_line(std::size_t k, TimePoint now, json& j) {
    const auto& sampler = *service_.sampler_;
    const auto pos = positions_[k];
    auto& [fast_until, slow_until] = sent_until_[k];
    json fast = json::array(), slow = json::array();
    for (const auto& s : sampler.fast_samples(pos, fast_until, now)) {
      if (s.time <= fast_until) continue;
      fast.push_back(to_json(s, now));
      fast_until = s.time;
    }
    for (const auto& s : sampler.slow_samples(pos, slow_until, now)) {
      if (s.time <= slow_until) continue;
      slow.push_back(to_json(s, now));
      slow_until = s.time;
    }
    j["samples"] = std::move(fast);
    j["slow_samples"] = std::move(slow);
    const auto health = sampler.health(pos);
    j["read_errors"] = health.read_errors;
    j["last_error"] = health.last_error;
    j["last_error_field"] = health.last_error_field;
    if (health.lost_at) j["lost_t"] = std::chrono::duration<double>(*health.lost_at - now).count();
  }

  // The first line waits for one read of the on-demand fields it asked for: a fast tick that
  // began after they were asked for, and a slow read after that.
  bool ready(const telemetry::Snapshot& snap) const {
    if (!wanted_.fast().empty() && snap.tick < opened_tick_ + 2) return false;
    if (wanted_.slow().empty()) return true;
    return std::all_of(positions_.begin(), positions_.end(), [&](std::size_t pos) {
      const auto& g = snap.gpus.at(pos);
      return g.health.lost || (g.slow && g.slow->time > opened_);
    });
  }

  Service& service_;
  std::vector<std::size_t> positions_;
  std::chrono::nanoseconds wall_;
  std::optional<std::chrono::steady_clock::time_point> stale_since_;
  std::uint64_t count_, sent_ = 0;
  FieldSet wanted_;
  TimePoint opened_{};
  std::uint64_t opened_tick_ = 0;
  std::chrono::steady_clock::time_point give_up_waiting_;
  std::vector<std::optional<units::Joules>> energy_base_;
  bool every_sample_ = false;
  std::vector<std::pair<TimePoint, TimePoint>> sent_until_;  // last fast, slow sample sent
};

void Service::demand(FieldSet fields, int delta) {
  std::lock_guard lock(demand_mutex_);
  // Every open stream (dmon, stat) wants the counters each second, not every counters_every.
  streams_open_ += delta;
  sampler_->set_slow_full_rate(streams_open_ > 0);
  FieldSet wanted;
  for (std::size_t i = 0; i < demand_count_.size(); ++i) {
    const auto f = static_cast<Field>(i);
    if (fields.has(f)) demand_count_[i] += delta;
    if (demand_count_[i] > 0) wanted.add(f);
  }
  sampler_->set_demand(wanted);
}

std::unique_ptr<Stream> Service::open_stream(const json& request) {
  const double seconds = number_of(request, "interval_seconds", 1.0, 0, 86400);
  const double sampling = std::chrono::duration<double>(options_.interval).count();
  if (!(seconds > 0) || seconds > 86400)
    throw bad_argument(
        fmt::format("interval_seconds must be > 0 and at most 86400, got {}", seconds));
  // 1 µs of slack: 0.1 s written by the client is the service's 100 ms.
  if (seconds < sampling - 1e-6)
    throw bad_argument(fmt::format("stream interval {} s is shorter than the service's sampling "
                                   "interval {} s",
                                   seconds, sampling),
                       "ask for a longer interval, or read NVML directly (gpuclk --direct dmon)");
  const auto count = count_of(request, "count", 0, std::uint64_t{1} << 40);
  FieldSet wanted;
  for (const auto& name : request.value("fields", json::array())) {
    const auto text = name.get<std::string>();
    bool known = false;
    for (std::size_t i = 0; i < static_cast<std::size_t>(Field::count); ++i) {
      const auto f = static_cast<Field>(i);
      if (telemetry::field_name(f) != text) continue;
      known = kStreamOnDemand.has(f) || sampler_->options().fields.has(f);
      if (kStreamOnDemand.has(f)) wanted.add(f);
    }
    if (!known) {
      std::string valid;
      for (std::size_t i = 0; i < static_cast<std::size_t>(Field::count); ++i) {
        const auto f = static_cast<Field>(i);
        if (kStreamOnDemand.has(f) || sampler_->options().fields.has(f))
          valid += (valid.empty() ? "" : ", ") + std::string(telemetry::field_name(f));
      }
      throw bad_argument(fmt::format("the service does not sample '{}'", text), "valid: " + valid);
    }
  }
  const auto samples = string_of(request, "samples", "latest");
  if (samples != "latest" && samples != "all")
    throw bad_argument(fmt::format("unknown samples '{}'", samples), "valid: latest, all");
  const auto interval =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  const auto wall = clock_.wall_time_until(clock_.now() + interval).value_or(interval);
  return std::make_unique<SampleStream>(
      *this, positions(request), wall, static_cast<std::uint64_t>(count), wanted, samples == "all");
}

Reply Service::answer(const json& request, const Peer& peer) {
  try {
    // Anything else, and a request in another version, handle() answers (or refuses).
    if (!request.is_object() || request.value("v", kProtocolVersion) != kProtocolVersion)
      return {handle(request, peer), nullptr};
    const auto what = request.value("request", std::string());
    if (what == "stream") return {json(), open_stream(request)};
    // The answers of the node state alone, shared by every client until the next refresh.
    if (what == "status") {
      const auto s = state();
      return {json(), nullptr, serialized(what, *s, [&] { return status_response(*s); })};
    }
    if (what == "view") {
      const auto name = request.value("name", std::string());
      const auto s = ask_view(name);
      if (!s->views.count(name)) return {json(), std::make_unique<ViewWait>(*this, name)};
      return {json(), nullptr,
              serialized("view " + name, *s, [&] { return view_response(name, *s); })};
    }
  } catch (const std::exception& e) {
    return {error_for(e), nullptr};
  }
  return {handle(request, peer), nullptr};
}

json Service::handle(const json& request, const Peer& peer) const {
  try {
    if (!request.is_object()) throw bad_argument("a request is a JSON object");
    const int v = request.value("v", kProtocolVersion);
    if (v != kProtocolVersion)
      throw bad_argument(fmt::format("protocol version {} not spoken", v),
                         fmt::format("this service speaks version {}", kProtocolVersion));
    const auto what = request.value("request", std::string());
    if (what == "hello") return hello(peer);
    if (what == "status") return status_response(*state());
    if (what == "view") {
      const auto name = request.value("name", std::string());
      return view_response(name, *state_with_view(name));
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

}  // namespace gpuclk::serve
