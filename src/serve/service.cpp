#include "serve/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "rules/process_owners.h"
#include "serve/findings.h"
#include "util/error.h"
#include "util/thread_name.h"

namespace gpuclk::serve {
namespace {

using telemetry::Duration;

constexpr telemetry::Duration kServiceNvLinkErrorPeriod = std::chrono::minutes(1);

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r.optional();
}

}  // namespace

Service::Service(gpu::DeviceSet& devices, const Clock& clock, ServiceOptions options,
                 std::vector<View> views)
    : devices_(devices), clock_(clock), options_(std::move(options)), views_(std::move(views)) {
  telemetry::SamplerOptions so;
  so.fast_interval = options_.interval;
  // PCIe replays for /metrics and dmon -s e (one cheap read a second); dmon's other extra
  // columns only while a dmon streams them (kStreamOnDemand).
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
  streams_ = std::make_unique<Streams>(*sampler_, clock_, options_.interval);
  answers_ = std::make_unique<Answers>(*this, *sampler_, *streams_, devices_);
  event_log_ = std::make_unique<EventLog>(all, clock_, options_.history);
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
  attribution_ =
      std::make_unique<attribution::Attribution>(std::move(indexes), [this](unsigned pid) {
        attribution::ProcessIdentity id;
        id.owner = rules::process_owner(devices_.api(), pid);
        if (auto name = devices_.process_name(pid)) id.name = *name;
        return id;
      });
  attributed_.assign(facts_.size(), std::nullopt);
  std::vector<std::string> uuids;
  for (const auto& f : facts_) uuids.push_back(f.key.uuid);
  pods_ = std::make_unique<attribution::PodNamer>(
      options_.kubelet_socket, options_.list_pod_resources, std::move(uuids),
      [](const std::string& line) { std::cerr << "gpuclk serve: " << line << std::endl; });
  refresh();
  event_log_->start();
  sampler_->start();
  running_ = true;
  refresher_ = std::thread([this] {
    util::name_this_thread("gpuclk-refresh");
    refresh_loop();
  });
}

std::vector<gpu::GpuEvent> Service::events(std::size_t gpu, Duration window) const {
  return event_log_->events(gpu, sampler_->now() - window);
}

void Service::stop() {
  if (!running_.exchange(false)) return;
  {
    std::lock_guard lock(stop_mutex_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
  // The event thread ends after its current wait: asked first, joined last, so its wait runs out
  // while the others stop.
  event_log_->request_stop();
  if (refresher_.joinable()) refresher_.join();
  state_cv_.notify_all();  // a view request waiting for a refresh gives up
  sampler_->stop();
  event_log_->stop();
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
  next->findings = findings_hold_.update(
      node_findings(next->status), std::chrono::steady_clock::now(),
      window_findings(next->status, *sampler_, attribution_.get(),
                      options_.communicators ? options_.communicators()
                                             : std::vector<rules::CommunicatorWindow>{}));
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

std::vector<std::optional<attribution::PodName>> Service::gpu_pods() const {
  return pods_ ? pods_->gpus() : std::vector<std::optional<attribution::PodName>>{};
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

}  // namespace gpuclk::serve
