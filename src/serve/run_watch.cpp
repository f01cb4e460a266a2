#include "serve/run_watch.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gpu/simulator.h"
#include "serve/client.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// The command's own sampler

class SamplerWatch : public RunWatch {
 public:
  SamplerWatch(const std::vector<gpu::Device*>& devices, const Clock& clock,
               const telemetry::SamplerOptions& options)
      : devices_(devices),
        sampler_(telemetry::device_sources(devices, options.fields), clock, options),
        truth_start_(devices.size()) {}
  ~SamplerWatch() override { sampler_.stop(); }
  SamplerWatch(const SamplerWatch&) = delete;
  SamplerWatch& operator=(const SamplerWatch&) = delete;

  void start() override {
    // On the simulator, its exact energy counter beside NVML's (not_supported on real GPUs),
    // read right before start() and right after stop(), which read the counters first and last:
    // the two windows match to a millisecond or so.
    for (std::size_t i = 0; i < devices_.size(); ++i)
      truth_start_[i] = gpu::simulator_energy(*devices_[i]);
    sampler_.start();
  }

  // NVML lists the processes holding a context on each GPU.
  void attribute(const std::function<bool(pid_t)>& owns, std::set<unsigned>& used) override {
    for (const auto* d : devices_) {
      auto processes = d->processes();
      if (!processes) continue;
      for (const auto& p : *processes) {
        if (owns(static_cast<pid_t>(p.pid))) used.insert(d->index());
      }
    }
  }

  Watched finish() override {
    sampler_.stop();
    Watched w;
    w.sampled_by = "this process";
    w.sampling = sampler_.options();
    w.timing = sampler_.timing();
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      WatchedGpu g{sampler_.info(i), sampler_.summary(i), sampler_.health(i), std::nullopt};
      if (const auto truth_end = gpu::simulator_energy(*devices_[i]);
          truth_start_[i] && truth_end && !g.summary.lost) {
        g.truth_energy_j = truth_end->value() - truth_start_[i]->value();
      }
      w.gpus.push_back(std::move(g));
    }
    return w;
  }

 private:
  std::vector<gpu::Device*> devices_;
  telemetry::Sampler sampler_;
  std::vector<gpu::Reading<units::Joules>> truth_start_;
};

// ---------------------------------------------------------------------------------------------
// The service's stream

// The selected GPUs' static facts, from the service's status answer.
std::vector<telemetry::GpuInfo> gpu_infos(const StatusAnswer& status,
                                          const std::vector<std::size_t>& positions) {
  std::vector<telemetry::GpuInfo> infos;
  for (auto pos : positions) {
    const auto& st = status.status.at(pos);
    telemetry::GpuInfo info;
    info.index = st.index;
    info.uuid = st.uuid;
    info.name = st.name;
    info.max_sm_clock = st.sm_max.optional();
    info.max_memory_clock = st.memory_max.optional();
    info.power_limit = st.power_limit.optional();
    infos.push_back(std::move(info));
  }
  return infos;
}

// The service sampler's ticks, missed ticks and lateness between two of its snapshots.
telemetry::TimingStats timing_between(const telemetry::TimingStats& from,
                                      const telemetry::TimingStats& to) {
  telemetry::TimingStats t;
  t.ticks = to.ticks - from.ticks;
  t.missed_ticks = to.missed_ticks - from.missed_ticks;
  t.lateness_p99 = to.lateness_p99;
  return t;
}

// One GPU's energy counter between the service's reads of it (once a second while a stream is
// open): its value at any moment between two reads is the earlier read plus the share of the
// step that the power readings (every sampling interval) put before that moment. So a window
// that starts and ends between reads, as a command's does, gets the counter's accuracy rather
// than the power readings' (1 s averages that lag a changing load by up to a second).
class CounterTrack {
 public:
  void add_power(const telemetry::FastSample& s) {
    if (s.power) power_.emplace_back(s.time, s.power->value());
  }
  void add_read(const telemetry::SlowSample& s) {
    if (s.energy) reads_.emplace_back(s.time, s.energy->value());
  }
  bool empty() const { return reads_.empty(); }
  // A read at or after `t` has come.
  bool read_since(telemetry::TimePoint t) const {
    return !reads_.empty() && reads_.back().first >= t;
  }
  // The counter at `t`; nullopt without a read, or across a counter reset. Between two reads the
  // step is shared out by the power readings; before the first or after the last read (a
  // service that read no counter for the stream in time) the power readings carry it from the
  // nearest read.
  std::optional<double> at(telemetry::TimePoint t) const {
    if (reads_.empty()) return std::nullopt;
    const auto after =
        std::lower_bound(reads_.begin(), reads_.end(), t,
                         [](const Read& r, telemetry::TimePoint x) { return r.first < x; });
    if (after == reads_.end()) return reads_.back().second + integral(reads_.back().first, t);
    if (after->first == t) return after->second;
    if (after == reads_.begin()) return after->second - integral(t, after->first);
    const auto& [t0, e0] = *std::prev(after);
    const auto& [t1, e1] = *after;
    if (e1 < e0) return std::nullopt;
    const double whole = integral(t0, t1);
    const double share = whole > 0 ? integral(t0, t) / whole : seconds(t0, t) / seconds(t0, t1);
    return e0 + std::clamp(share, 0.0, 1.0) * (e1 - e0);
  }

 private:
  using Read = std::pair<telemetry::TimePoint, double>;
  static double seconds(telemetry::TimePoint a, telemetry::TimePoint b) {
    return std::chrono::duration<double>(b - a).count();
  }
  // The power readings over [a, b], each held until the next.
  double integral(telemetry::TimePoint a, telemetry::TimePoint b) const {
    double joules = 0;
    for (std::size_t i = 0; i < power_.size(); ++i) {
      const auto from = std::max(power_[i].first, a);
      const auto to = i + 1 < power_.size() ? std::min(power_[i + 1].first, b) : b;
      if (to > from) joules += power_[i].second * seconds(from, to);
    }
    return joules;
  }
  std::vector<Read> reads_, power_;
};

// The service's stream, as one stat run sees it: a summary per GPU over the command's run (from
// the service's time when it started to its time when it ended), the read errors after the first
// line, a loss.
struct StreamWindow {
  explicit StreamWindow(std::size_t gpus)
      : builders(gpus), counters(gpus), health(gpus), errors_before(gpus) {}

  void consume(const StreamLine& line) {
    if (line.end) return;
    const auto now = line.time;
    const auto& gpus = line.gpus;
    // An older gpuclk serve says no time in its snapshot: the window starts at its first line.
    if (!start) start = now;
    last = now;
    for (std::size_t k = 0; k < builders.size() && k < gpus.size(); ++k) add(k, gpus[k]);
  }

  // The samples up to the command's end (`until`: the service's time once the command has ended):
  // every line up to it, then until each GPU's energy counter was read after it (within a
  // second and a half or so), so the counter covers the window's last moment too.
  void read_to(Client& client, std::optional<telemetry::TimePoint> until, double line_seconds) {
    end = until;
    const auto wait = std::chrono::milliseconds(static_cast<long long>(line_seconds * 1000) + 5000);
    const auto give_up = std::chrono::steady_clock::now() + wait;
    const auto counted = [&] {
      return std::all_of(counters.begin(), counters.end(),
                         [&](const CounterTrack& c) { return c.empty() || c.read_since(*end); });
    };
    do {
      auto line = client.next_line(wait);
      if (!line) break;
      consume(*line);
    } while (end &&
             (!last || *last < *end || (!counted() && std::chrono::steady_clock::now() < give_up)));
  }

  // What GPU k did over the window; its energy from the counter's values at both ends.
  telemetry::Summary summary(std::size_t k) const {
    if (!builders[k]) return {};
    auto s = builders[k]->finish(end.value_or(*last));
    const auto e0 = counters[k].at(*start), e1 = counters[k].at(end.value_or(*last));
    if (e0 && e1 && !s.lost && s.energy && s.seconds() >= telemetry::kShortestEnergyWindowSeconds) {
      s.energy = units::Joules(*e1 - *e0);
      s.energy_source = telemetry::EnergySource::counter;
      s.power_mean = units::Watts(s.energy->value() / s.seconds());
    }
    return s;
  }

  std::optional<telemetry::TimePoint> start, last, end;
  std::vector<std::optional<telemetry::SummaryBuilder>> builders;
  std::vector<CounterTrack> counters;
  std::vector<telemetry::GpuHealth> health;

 private:
  void add(std::size_t k, const StreamGpu& g) {
    if (!builders[k]) builders[k].emplace(*start);
    // Every read counts for the counter; the summary takes the window's samples only.
    const auto in_window = [&](telemetry::TimePoint t) { return !end || t <= *end; };
    for (const auto& s : g.samples) {
      counters[k].add_power(s);
      if (in_window(s.time)) builders[k]->add(s);
    }
    for (const auto& s : g.slow_samples) {
      counters[k].add_read(s);
      if (in_window(s.time)) builders[k]->add(s);
    }
    // The service counts read errors since it started: the run's are those after its first line.
    const auto errors = g.health.read_errors;
    if (!errors_before[k]) errors_before[k] = errors;
    health[k].read_errors = errors - std::min(errors, *errors_before[k]);
    if (health[k].read_errors > 0) {
      health[k].last_error = g.health.last_error;
      health[k].last_error_field = g.health.last_error_field;
    }
    if (g.health.lost_at && !health[k].lost) {
      health[k].lost = true;
      health[k].lost_at = g.health.lost_at;
      builders[k]->mark_lost(*health[k].lost_at);
    }
  }
  std::vector<std::optional<std::uint64_t>> errors_before;
};

class ServiceWatch : public RunWatch {
 public:
  ServiceWatch(Client& client, std::unique_ptr<Client> stream, StatusAnswer status,
               std::vector<std::size_t> positions, telemetry::Duration interval,
               telemetry::Duration slow_interval)
      : client_(client),
        stream_(std::move(stream)),
        status_(std::move(status)),
        positions_(std::move(positions)),
        infos_(gpu_infos(status_, positions_)),
        window_(infos_.size()),
        line_seconds_(std::chrono::duration<double>(interval).count()) {
    sampling_.fast_interval = interval;
    sampling_.slow_interval = slow_interval;
    for (const auto& info : infos_) indexes_.push_back(info.index);
    // Which GPUs the command uses: the processes in the service's `top` view (asked once now,
    // so that the service reads it while the command runs).
    (void)client_.top_view();
    // A line per sampling interval: the window ends at most one interval after the command.
    StreamRequest request;
    request.gpus = indexes_;
    request.interval_seconds = line_seconds_;
    request.every_sample = true;
    stream_->open_stream(request);
  }

  void start() override {
    auto first = stream_->next_line(10000ms);
    if (!first) throw Error(ExitCode::other, "the service (gpuclk serve) did not start streaming");
    // After the first line (which waits for the service's next counter read, up to a second):
    // the window starts at the service's time now, right before the command starts, and so do
    // the ticks and the simulator's energy counted for it. The first line's samples from before
    // it give the counter's value at the start.
    snapshot_start_ = snapshot_now();
    window_.start = service_time(snapshot_start_);
    window_.consume(*first);
  }

  void attribute(const std::function<bool(pid_t)>& owns, std::set<unsigned>& used) override {
    if (failed_) return;
    try {
      drain(200ms);
      const auto view = client_.top_view();
      for (auto pos : positions_) {
        const auto& processes = view.rows.at(pos).processes;
        if (!processes) continue;
        for (const auto& p : *processes) {
          if (owns(static_cast<pid_t>(p.pid))) used.insert(status_.gpus.at(pos).index);
        }
      }
    } catch (const Error& e) {
      failed_ = e;
    }
  }

  Watched finish() override {
    if (failed_) throw *failed_;
    const auto snapshot_end = snapshot_now();
    window_.read_to(*stream_, service_time(snapshot_end), line_seconds_);
    Watched w;
    w.sampled_by = "gpuclk serve";
    w.sampling = sampling_;
    w.timing = timing_between(snapshot_start_.timing, snapshot_end.timing);
    for (std::size_t k = 0; k < infos_.size(); ++k) {
      WatchedGpu g{infos_[k], window_.summary(k), window_.health[k], std::nullopt};
      const auto truth_start = snapshot_start_.gpus.at(k).simulator_energy_j;
      const auto truth_end = snapshot_end.gpus.at(k).simulator_energy_j;
      if (truth_start && truth_end && !g.summary.lost) g.truth_energy_j = *truth_end - *truth_start;
      w.gpus.push_back(std::move(g));
    }
    return w;
  }

 private:
  // The sampler's timing, and on the simulator each GPU's exact energy (in `indexes_` order).
  // The service reads the counters once more right then (read_counters), on its slow threads:
  // the window's edges are counter reads, as they are for stat's own sampler.
  Snapshot snapshot_now() { return client_.snapshot(indexes_, true, telemetry::TimePoint{}); }
  // The service's time when it answered `snapshot` ("now"; a gpuclk serve before it said only its
  // last tick's "time").
  static std::optional<telemetry::TimePoint> service_time(const Snapshot& snapshot) {
    return snapshot.now ? snapshot.now : snapshot.time;
  }
  // The lines that have come, for at most `budget` of wall time: where parsing them is slower
  // than the service sends them (a sanitized build on a loaded machine), an unbounded drain never
  // returned, no other request went out, and the service dropped the idle connection.
  void drain(std::chrono::milliseconds budget) {
    const auto until = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < until) {
      auto line = stream_->next_line(0ms);
      if (!line) break;
      window_.consume(*line);
    }
  }

  Client& client_;
  std::unique_ptr<Client> stream_;
  StatusAnswer status_;
  std::vector<std::size_t> positions_;
  std::vector<telemetry::GpuInfo> infos_;
  std::vector<unsigned> indexes_;
  StreamWindow window_;
  double line_seconds_;
  telemetry::SamplerOptions sampling_;
  Snapshot snapshot_start_;
  std::optional<Error> failed_;
};

}  // namespace

std::unique_ptr<RunWatch> open_sampler_watch(const std::vector<gpu::Device*>& devices,
                                             const Clock& clock,
                                             const telemetry::SamplerOptions& options) {
  return std::make_unique<SamplerWatch>(devices, clock, options);
}

std::unique_ptr<RunWatch> open_service_watch(
    Client& client, const Hello& hello,
    const std::function<std::vector<std::size_t>(const std::vector<gpu::DeviceKey>& keys)>& select,
    telemetry::Duration interval) {
  const double sampling = hello.interval_seconds.value_or(0.0);
  if (std::abs(sampling - std::chrono::duration<double>(interval).count()) > 1e-6) return nullptr;
  auto status = client.status();
  auto positions = select(status.gpus);
  auto stream = Client::connect(client.path());
  if (!stream) throw Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
  const auto slow = std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double>(hello.slow_interval_seconds.value_or(1.0)));
  return std::make_unique<ServiceWatch>(client, std::move(stream), std::move(status),
                                        std::move(positions), interval, slow);
}

}  // namespace gpuclk::serve
