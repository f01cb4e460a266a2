#include "telemetry/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "gpu/device.h"
#include "telemetry/packed_sample.h"
#include "util/thread_name.h"

namespace gpuclk::telemetry {
namespace {

// Longest single sleep on a clock that does not wait in wall time (tests' manual clock).
constexpr Duration kSleepStep = std::chrono::milliseconds(50);

Duration percentile(std::vector<Duration> values, double q) {
  if (values.empty()) return {};
  auto k = static_cast<std::size_t>(std::lround(q * double(values.size() - 1)));
  std::nth_element(values.begin(), values.begin() + long(k), values.end());
  return values[k];
}

// A frozen simulator's clock (scale 0) never reaches a deadline.
const Clock& pacing_clock(const Clock& clock, const Clock& wall) {
  const auto* scaled = dynamic_cast<const ScaledClock*>(&clock);
  return scaled && scaled->scale() <= 0 ? wall : clock;
}

template <class T>
std::vector<T> all_of(const RingBuffer<T>& ring) {
  std::vector<T> out;
  out.reserve(ring.size());
  for (std::size_t i = 0; i < ring.size(); ++i) out.push_back(ring.at(i));
  return out;
}

}  // namespace

struct Sampler::Gpu {
  Gpu(std::unique_ptr<GpuSource> s, const SamplerOptions& o, TimePoint start)
      : source(std::move(s)),
        info(source->info()),
        fast(o.fast_capacity),
        slow(o.slow_capacity),
        running(start) {}

  std::unique_ptr<GpuSource> source;
  GpuInfo info;
  mutable std::mutex fast_mutex;
  RingBuffer<PackedFastSample> fast;  // packed: the service keeps 10 min of them
  mutable std::mutex slow_mutex;
  RingBuffer<PackedSlowSample> slow;  // packed: an NVLink node's samples are 2 KB unpacked
  std::optional<SlowSample> last_slow,
      previous_slow;  // the ring's last two, unpacked, for snapshots
  mutable std::mutex summary_mutex;
  SummaryBuilder running;  // since start()
  // When stopped: the time of this GPU's closing counter read, where its window ends. One end
  // for all GPUs (after the last GPU's read) left the earlier GPUs' windows longer than their
  // energy counters' span: ~4 ms of energy read per GPU on an H100, 30 ms for GPU 0 of 8.
  std::optional<TimePoint> closed_at;
  mutable std::mutex health_mutex;
  GpuHealth health;
  std::atomic<bool> lost{false};
  std::thread slow_thread;
};

Sampler::Sampler(std::vector<std::unique_ptr<GpuSource>> sources, const Clock& clock,
                 SamplerOptions options)
    : clock_(pacing_clock(clock, wall_clock_)), options_(options) {
  if (options_.fast_interval <= Duration::zero())
    throw std::invalid_argument("fast_interval must be > 0");
  // Slow reads stay in phase with fast ticks (see slow_loop), so the cadence is whole ticks.
  const auto ticks = std::max<Duration::rep>(
      1, (options_.slow_interval.count() + options_.fast_interval.count() - 1) /
             options_.fast_interval.count());
  options_.slow_interval = options_.fast_interval * ticks;
  started_at_ = clock_.now();
  for (auto& s : sources)
    gpus_.push_back(std::make_unique<Gpu>(std::move(s), options_, started_at_));
}

Sampler::~Sampler() { stop(); }

const GpuInfo& Sampler::info(std::size_t gpu) const { return gpus_.at(gpu)->info; }

TimePoint Sampler::now() const {
  {
    std::scoped_lock lock(tick_mutex_);
    if (stopped_at_) return *stopped_at_;
  }
  return clock_.now();
}

void Sampler::start() {
  if (running_.exchange(true)) return;
  stop_requested_ = false;
  {
    std::scoped_lock lock(tick_mutex_);
    stopped_at_.reset();
  }
  started_at_ = clock_.now();
  // Each GPU's window starts with its counters' baseline (energy, violations, GPM), read before
  // any thread runs: with 8 GPUs at ~4 ms each, a shared start would miss up to 30 ms of energy.
  const FieldSet baseline = counter_fields();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    {
      std::scoped_lock lock(gpus_[i]->summary_mutex);
      gpus_[i]->running = SummaryBuilder(clock_.now());
      gpus_[i]->closed_at.reset();
    }
    if (!baseline.empty()) sample_slow_once(i, baseline);
  }
  fast_thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-fast");
    fast_loop();
  });
  if (!(options_.fields | options_.on_demand).slow().empty()) {
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      gpus_[i]->slow_thread = std::thread([this, i] {
        util::name_this_thread("gpuclk-slow" + std::to_string(i));
        slow_loop(i);
      });
    }
  }
}

FieldSet Sampler::counter_fields() const {
  FieldSet fields;
  for (Field f : {Field::energy, Field::violation_time, Field::gpm}) {
    if (options_.fields.has(f)) fields.add(f);
  }
  return fields;
}

void Sampler::stop() {
  if (!running_.load()) return;
  {
    std::scoped_lock lock(stop_mutex_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
  if (fast_thread_.joinable()) fast_thread_.join();
  for (auto& g : gpus_) {
    if (g->slow_thread.joinable()) g->slow_thread.join();
  }
  // Close the window with fresh readings: the energy and violation counters make the whole-run
  // figures exact up to this moment, and the last GPM window ends here.
  const auto now = clock_.now();
  sample_fast_once(now);
  const FieldSet closing = counter_fields();
  if (!closing.empty()) {
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const auto read_at = sample_slow_once(i, closing);
      std::scoped_lock lock(gpus_[i]->summary_mutex);
      gpus_[i]->closed_at = read_at;
    }
  }
  {
    std::scoped_lock lock(tick_mutex_);
    stopped_at_ = clock_.now();
    running_ = false;
  }
  tick_cv_.notify_all();
}

bool Sampler::sleep_until(TimePoint deadline) const {
  return sleep_until(deadline, std::numeric_limits<std::uint64_t>::max());
}

bool Sampler::sleep_until(TimePoint deadline, std::uint64_t seen) const {
  const auto asked = [&] {
    return seen != std::numeric_limits<std::uint64_t>::max() && read_slow_now_.load() != seen;
  };
  while (!stop_requested_.load()) {
    auto now = clock_.now();
    if (now >= deadline || asked()) return true;
    if (auto wall = clock_.wall_time_until(deadline)) {
      // One wait to the deadline, cut short by stop(): 9 threads on 8 GPUs that woke every
      // 50 ms to look at a flag cost the service ~0.3 % of a core in wake-ups alone.
      std::unique_lock lock(stop_mutex_);
      stop_cv_.wait_for(lock, *wall, [&] { return stop_requested_.load() || asked(); });
    } else {
      clock_.sleep_until(std::min(deadline, now + kSleepStep));
    }
  }
  return false;
}

void Sampler::fast_loop() {
  const auto interval = options_.fast_interval;
  std::uint64_t k = 0;
  while (sleep_until(started_at_ + interval * k)) {
    const auto scheduled = started_at_ + interval * k;
    // The first tick waits for start()'s baseline reads: not a schedule slip.
    fast_tick(scheduled, k > 0);
    // The next tick on the schedule; ticks more than half an interval past are skipped.
    const auto now = clock_.now();
    std::uint64_t skipped = 0;
    ++k;
    while (started_at_ + interval * k + interval / 2 < now) ++k, ++skipped;
    if (skipped) {
      std::scoped_lock lock(tick_mutex_);
      missed_ticks_ += skipped;
    }
  }
}

void Sampler::slow_loop(std::size_t index) {
  Gpu& g = *gpus_[index];
  // Just after a fast tick, so the milliseconds of a slow read end before the next one.
  const Duration phase =
      std::min<Duration>(options_.fast_interval / 10, std::chrono::milliseconds(10));
  const auto interval = options_.slow_interval;
  // The first read at once (slow columns have values from the first rows on); start() already
  // read the counters' baseline.
  std::uint64_t k = 0;
  TimePoint next = started_at_;
  const std::uint64_t idle_every = std::max(1u, options_.slow_idle_every);
  std::uint64_t seen = read_slow_now_.load();
  while (!g.lost.load() && sleep_until(next, seen)) {
    if (const auto asked = read_slow_now_.load(); asked != seen) {
      seen = asked;
      // Asked between two slots: one read now, and the schedule goes on.
      if (clock_.now() < next) {
        sample_slow_once(index, (options_.fields | demand_.load()).slow());
        continue;
      }
    }
    if (slow_full_rate_.load() || k % idle_every == 0)
      sample_slow_once(index, (options_.fields | demand_.load()).slow());
    const auto now = clock_.now();
    do {
      ++k;
      next = started_at_ + phase + interval * k;
    } while (next < now);
  }
}

void Sampler::record_failure(Gpu& g, const ReadOutcome& outcome, TimePoint when) {
  {
    std::scoped_lock lock(g.health_mutex);
    g.health.read_errors += outcome.errors;
    g.health.last_error = outcome.last_error;
    g.health.last_error_field = outcome.last_error_field;
    if (outcome.lost && !g.health.lost) {
      g.health.lost = true;
      g.health.lost_at = when;
    }
  }
  if (outcome.lost) {
    g.lost = true;
    std::scoped_lock lock(g.summary_mutex);
    g.running.mark_lost(when);
  }
}

void Sampler::sample_fast_once(TimePoint scheduled) { fast_tick(scheduled, false); }

void Sampler::fast_tick(TimePoint scheduled, bool record_timing) {
  const FieldSet fields = (options_.fields | demand_.load()).fast();
  const auto tick_start = clock_.now();
  std::vector<Duration> lateness;
  for (auto& gp : gpus_) {
    Gpu& g = *gp;
    if (g.lost.load()) continue;
    FastSample s;
    s.time = clock_.now();
    ReadOutcome outcome = g.source->read_fast(fields, s);
    if (outcome.errors) record_failure(g, outcome, s.time);
    if (outcome.lost) continue;
    {
      std::scoped_lock lock(g.fast_mutex);
      g.fast.push(PackedFastSample(s));
    }
    {
      std::scoped_lock lock(g.summary_mutex);
      g.running.add(s);
    }
    lateness.push_back(s.time - scheduled);
  }
  const auto cost = clock_.now() - tick_start;
  {
    std::scoped_lock lock(tick_mutex_);
    ++ticks_;
    if (record_timing) {
      for (auto l : lateness) lateness_.push(l);
      tick_cost_.push(cost);
    }
  }
  tick_cv_.notify_all();
}

void Sampler::set_demand(FieldSet fields) { demand_ = fields & options_.on_demand; }

std::optional<TimePoint> Sampler::sample_slow_once(std::size_t index, const FieldSet& fields) {
  Gpu& g = *gpus_.at(index);
  if (g.lost.load()) return std::nullopt;
  SlowSample s;
  s.time = clock_.now();
  ReadOutcome outcome = g.source->read_slow(fields, s);
  if (outcome.errors) record_failure(g, outcome, s.time);
  if (outcome.lost) return std::nullopt;
  {
    std::scoped_lock lock(g.slow_mutex);
    g.slow.push(PackedSlowSample(s));
    g.previous_slow = std::move(g.last_slow);
    g.last_slow = s;
  }
  std::scoped_lock lock(g.summary_mutex);
  g.running.add(s);
  return s.time;
}

Snapshot Sampler::snapshot() const {
  Snapshot snap;
  {
    std::scoped_lock lock(tick_mutex_);
    snap.tick = ticks_;
  }
  snap.time = now();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const Gpu* g = gpus_[i].get();
    GpuSnapshot s;
    s.info = g->info;
    s.health = health(i);
    {
      std::scoped_lock lock(g->fast_mutex);
      if (!g->fast.empty()) s.fast = g->fast.back().unpack();
    }
    {
      std::scoped_lock lock(g->slow_mutex);
      s.slow = g->last_slow;
      s.previous_slow = g->previous_slow;
    }
    snap.gpus.push_back(std::move(s));
  }
  return snap;
}

GpuHealth Sampler::health(std::size_t gpu) const {
  const Gpu& g = *gpus_.at(gpu);
  std::scoped_lock lock(g.health_mutex);
  return g.health;
}

std::vector<FastSample> Sampler::fast_samples(std::size_t gpu, TimePoint from, TimePoint to) const {
  const Gpu& g = *gpus_.at(gpu);
  std::scoped_lock lock(g.fast_mutex);
  return g.fast.between(from, to, [](const PackedFastSample& p) { return p.unpack(); });
}

std::vector<SlowSample> Sampler::slow_samples(std::size_t gpu, TimePoint from, TimePoint to) const {
  const Gpu& g = *gpus_.at(gpu);
  std::scoped_lock lock(g.slow_mutex);
  return g.slow.between(from, to, [](const PackedSlowSample& p) { return p.unpack(); });
}

std::optional<Joules> Sampler::energy_at(std::size_t gpu, TimePoint t) const {
  const auto slow = slow_samples(gpu, t - std::chrono::minutes(2), t);
  const auto read = std::find_if(slow.rbegin(), slow.rend(),
                                 [](const SlowSample& s) { return s.energy.has_value(); });
  if (read == slow.rend()) return std::nullopt;
  double joules = read->energy->value();
  // From the reading in effect at the counter's read (one fast interval before it at most, a
  // second for a slow schedule) to `t`.
  const auto back = std::max<Duration>(2 * options_.fast_interval, std::chrono::seconds(1));
  const auto fast = fast_samples(gpu, read->time - back, t);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    if (!fast[i].power) continue;
    const auto from = std::max(fast[i].time, read->time);
    const auto to = i + 1 < fast.size() ? std::min(fast[i + 1].time, t) : t;
    if (to > from)
      joules += fast[i].power->value() * std::chrono::duration<double>(to - from).count();
  }
  return Joules(joules);
}

void Sampler::read_slow_now() {
  {
    std::scoped_lock lock(stop_mutex_);
    ++read_slow_now_;
  }
  stop_cv_.notify_all();
}

Summary Sampler::summary(std::size_t gpu) const {
  const Gpu& g = *gpus_.at(gpu);
  const auto end = now();
  std::scoped_lock lock(g.summary_mutex);
  return g.running.finish(g.closed_at.value_or(end));
}

Summary Sampler::summary(std::size_t gpu, TimePoint from, TimePoint to) const {
  auto fast = fast_samples(gpu, from, to);
  auto slow = slow_samples(gpu, from, to);
  SummaryBuilder builder(from);
  // Merge by time, so each slow read sees the power integral up to its own time.
  std::size_t f = 0, s = 0;
  while (f < fast.size() || s < slow.size()) {
    if (s == slow.size() || (f < fast.size() && fast[f].time <= slow[s].time))
      builder.add(fast[f++]);
    else
      builder.add(slow[s++]);
  }
  auto h = health(gpu);
  if (h.lost_at && *h.lost_at <= to) builder.mark_lost(*h.lost_at);
  return builder.finish(to);
}

TimingStats Sampler::timing() const {
  std::scoped_lock lock(tick_mutex_);
  TimingStats t;
  t.ticks = ticks_;
  t.missed_ticks = missed_ticks_;
  auto lateness = all_of(lateness_);
  auto cost = all_of(tick_cost_);
  t.lateness_p50 = percentile(lateness, 0.5);
  t.lateness_p99 = percentile(lateness, 0.99);
  t.lateness_max =
      lateness.empty() ? Duration{} : *std::max_element(lateness.begin(), lateness.end());
  if (!cost.empty()) {
    Duration sum{};
    for (auto c : cost) sum += c;
    t.tick_cost_mean = sum / long(cost.size());
    t.tick_cost_p99 = percentile(cost, 0.99);
  }
  return t;
}

std::uint64_t Sampler::wait_for_tick(std::uint64_t seen,
                                     std::chrono::milliseconds wall_timeout) const {
  std::unique_lock lock(tick_mutex_);
  tick_cv_.wait_for(lock, wall_timeout, [&] { return ticks_ > seen || !running_.load(); });
  return ticks_;
}

std::vector<std::unique_ptr<GpuSource>> device_sources(const std::vector<gpu::Device*>& devices,
                                                       const FieldSet& fields,
                                                       Duration nvlink_error_period) {
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.reserve(devices.size());
  for (const auto* d : devices)
    sources.push_back(make_device_source(*d, fields, nvlink_error_period));
  return sources;
}

}  // namespace gpuclk::telemetry
