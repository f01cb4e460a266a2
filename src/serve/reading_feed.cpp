#include "serve/reading_feed.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "serve/client.h"
#include "util/error.h"
#include "util/stop_signal.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;
using telemetry::Field;
using telemetry::FieldSet;
using telemetry::GpuSnapshot;

// The snapshot once every live GPU's slow read of this tick is in (it starts a few ms after the
// fast tick), so the row's slow columns (energy, violations, PCIe, GPM) are this interval's
// rather than the previous one's; at most `wait` of wall time. `after_baseline`: on the first
// tick, start()'s read of the counters (energy, violations, GPM) is no slow read of this tick
// (it holds no ECC or PCIe values): wait for the one after it.
telemetry::Snapshot snapshot_with_slow_reads(const telemetry::Sampler& sampler,
                                             std::chrono::milliseconds wait, bool after_baseline) {
  const auto give_up = std::chrono::steady_clock::now() + wait;
  // A fast tick can run a little late, after its slow read began: "this tick's" slow read is
  // any within half an interval of the fast sample.
  const auto half = sampler.options().fast_interval / 2;
  for (;;) {
    auto snap = sampler.snapshot();
    const bool fresh = std::all_of(snap.gpus.begin(), snap.gpus.end(), [&](const GpuSnapshot& g) {
      return g.health.lost || !g.fast ||
             (g.slow && g.slow->time > g.fast->time - half && (!after_baseline || g.previous_slow));
    });
    if (fresh || std::chrono::steady_clock::now() >= give_up) return snap;
    std::this_thread::sleep_for(1ms);
  }
}

telemetry::SamplerOptions sampler_options(const FeedOptions& o) {
  telemetry::SamplerOptions so;
  so.fast_interval = o.interval;
  so.slow_interval = std::max<telemetry::Duration>(o.interval, 100ms);
  so.fields = o.fields;
  so.fast_capacity = 16;
  so.slow_capacity = 16;
  return so;
}

class SamplerFeed : public ReadingFeed {
 public:
  SamplerFeed(const std::vector<gpu::Device*>& devices, const Clock& clock, const FeedOptions& o)
      : fields_(o.fields),
        sampler_(telemetry::device_sources(devices, o.fields), clock, sampler_options(o)) {
    // Ticks on which the slow fields are read too (the sampler keeps them in phase).
    slow_every_ = static_cast<std::uint64_t>(sampler_.options().slow_interval /
                                             sampler_.options().fast_interval);
    slow_wait_ = std::min<std::chrono::milliseconds>(
        250ms, std::chrono::duration_cast<std::chrono::milliseconds>(o.interval / 2));
  }
  ~SamplerFeed() override { sampler_.stop(); }
  SamplerFeed(const SamplerFeed&) = delete;
  SamplerFeed& operator=(const SamplerFeed&) = delete;

  std::string source() const override { return "own sampler"; }
  telemetry::Duration slow_interval() const override { return sampler_.options().slow_interval; }

  std::optional<Readings> next() override {
    if (!started_) {
      sampler_.start();
      started_ = true;
    }
    while (!util::StopFlag::raised()) {
      const auto tick = sampler_.wait_for_tick(seen_, 100ms);
      if (tick == seen_) continue;
      seen_ = tick;
      const bool slow_due = !fields_.slow().empty() && (tick - 1) % slow_every_ == 0;
      const bool baseline =
          tick == 1 &&
          !(fields_ & FieldSet{Field::energy, Field::violation_time, Field::gpm}).empty();
      auto snap =
          slow_due ? snapshot_with_slow_reads(sampler_, slow_wait_, baseline) : sampler_.snapshot();
      Readings r;
      for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
        r.energy.push_back(fields_.has(Field::energy) && !snap.gpus[i].health.lost
                               ? sampler_.summary(i).energy
                               : std::nullopt);
      }
      r.gpus = std::move(snap.gpus);
      return r;
    }
    return std::nullopt;
  }

 private:
  FieldSet fields_;
  telemetry::Sampler sampler_;
  std::uint64_t slow_every_ = 1;
  std::chrono::milliseconds slow_wait_{};
  bool started_ = false;
  std::uint64_t seen_ = 0;
};

// One line of the service's stream as the sampler's snapshot and the energy column.
Readings readings_of(StreamLine line) {
  Readings r;
  for (auto& j : line.gpus) {
    GpuSnapshot g;
    g.info.index = j.key.index;
    g.info.uuid = std::move(j.key.uuid);
    g.health.lost = j.health.lost;
    g.fast = j.fast;
    g.slow = std::move(j.slow);
    g.previous_slow = std::move(j.previous_slow);
    r.gpus.push_back(std::move(g));
    r.energy.push_back(j.energy);
  }
  return r;
}

class ServiceFeed : public ReadingFeed {
 public:
  ServiceFeed(std::unique_ptr<Client> client, telemetry::Duration interval,
              telemetry::Duration slow_interval)
      : client_(std::move(client)),
        slow_interval_(slow_interval),
        // A service silent for this long is stuck (a frozen or fast simulator only shortens it).
        silence_(std::chrono::duration_cast<std::chrono::milliseconds>(2 * interval + 15s)) {}

  std::string source() const override { return "gpuclk serve"; }
  telemetry::Duration slow_interval() const override { return slow_interval_; }

  // The first line, before anything is printed: false when the service refused the options.
  bool start() {
    try {
      first_ = read();
    } catch (const Error& e) {
      if (e.code() == ExitCode::bad_argument) return false;
      throw;
    }
    return true;
  }

  std::optional<Readings> next() override {
    auto line = first_ ? std::exchange(first_, std::nullopt) : read();
    if (!line || line->end) return std::nullopt;
    return readings_of(std::move(*line));
  }

 private:
  // The next line; nullopt on a stop signal.
  std::optional<StreamLine> read() {
    const auto since = std::chrono::steady_clock::now();
    while (!util::StopFlag::raised()) {
      if (auto line = client_->next_line(100ms)) return line;
      if (std::chrono::steady_clock::now() - since > silence_)
        throw Error(ExitCode::other, "the service (gpuclk serve) stopped streaming",
                    "use --direct to read the GPUs without it");
    }
    return std::nullopt;
  }

  std::unique_ptr<Client> client_;
  telemetry::Duration slow_interval_;
  std::chrono::milliseconds silence_;
  std::optional<StreamLine> first_;
};

telemetry::Duration seconds_of(double s) {
  return std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(s));
}

}  // namespace

std::unique_ptr<ReadingFeed> open_sampler_feed(const std::vector<gpu::Device*>& devices,
                                               const Clock& clock, const FeedOptions& options) {
  return std::make_unique<SamplerFeed>(devices, clock, options);
}

std::unique_ptr<ReadingFeed> open_service_feed(const Client& client, const Hello& hello,
                                               const std::vector<unsigned>& indexes,
                                               const FeedOptions& options) {
  const double seconds = std::chrono::duration<double>(options.interval).count();
  if (hello.interval_seconds.value_or(1e9) > seconds + 1e-6) return nullptr;
  auto stream = Client::connect(client.path());
  if (!stream) throw Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
  StreamRequest request;
  request.gpus = indexes;
  request.interval_seconds = seconds;
  request.count = static_cast<std::uint64_t>(options.count);
  request.fields = options.fields;
  stream->open_stream(request);
  auto feed = std::make_unique<ServiceFeed>(std::move(stream), options.interval,
                                            seconds_of(hello.slow_interval_seconds.value_or(1.0)));
  if (!feed->start()) return nullptr;
  return feed;
}

}  // namespace gpuclk::serve
