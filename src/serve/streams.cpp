#include "serve/streams.h"

#include <fmt/format.h>

#include <algorithm>

#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

using nlohmann::json;
using telemetry::Duration;
using telemetry::Field;
using telemetry::FieldSet;
using telemetry::TimePoint;

// The `stream` request: the sampler's latest readings of the asked GPUs once per interval, for
// `gpuclk dmon` (docs/serve.md). It reads memory only; the poll thread calls next(). While open
// it wants its on-demand fields of the sampler (`demand`).
class SampleStream final : public Stream {
 public:
  SampleStream(const telemetry::Sampler& sampler, const Clock& clock, StreamDemand& demand,
               std::vector<gpu::DeviceKey> keys, std::vector<std::size_t> positions,
               const StreamOptions& request)
      : sampler_(sampler),
        demand_(demand),
        keys_(std::move(keys)),
        positions_(std::move(positions)),
        wall_(request.wall),
        count_(request.count),
        wanted_(request.wanted),
        every_sample_(request.every_sample) {
    demand_.change(wanted_, +1);
    opened_ = sampler_.now();
    sent_until_.assign(positions_.size(), {opened_, opened_});
    opened_tick_ = sampler_.snapshot().tick;
    const auto slow_wall = clock.wall_time_until(clock.now() + sampler_.options().slow_interval);
    give_up_waiting_ = std::chrono::steady_clock::now() + std::chrono::seconds(1) +
                       2 * slow_wall.value_or(sampler_.options().slow_interval);
  }
  ~SampleStream() override { demand_.change(wanted_, -1); }
  SampleStream(const SampleStream&) = delete;
  SampleStream& operator=(const SampleStream&) = delete;

  std::chrono::nanoseconds interval() const override { return wall_; }

  // A skipped line's samples are lost to the reader, as they would be in the line: the next
  // line's "samples" start after them. Building none of its JSON is what lets the poll thread
  // keep up with many streams whose readers stopped reading (a line costs its samples' JSON).
  bool skip_line() override {
    if (sent_ == 0 || (count_ && sent_ + 1 >= count_)) return false;
    const auto snap = sampler_.snapshot();
    for (auto& [fast_until, slow_until] : sent_until_) {
      fast_until = std::max(fast_until, snap.time);
      slow_until = std::max(slow_until, snap.time);
    }
    ++sent_;
    return true;
  }

  std::optional<std::string> next(bool& last) override {
    const auto snap = sampler_.snapshot();
    if (sent_ == 0 && std::chrono::steady_clock::now() < give_up_waiting_ && !ready(snap))
      return std::nullopt;
    // A snapshot older than two sampling intervals is stale: the service was stopped (SIGSTOP,
    // then SIGCONT) and this thread woke before the sampler's. Its values would go out as the
    // line of now: wait for the sampler's next tick instead, up to 2 s (a sampler that stays
    // late, a driver call that hangs: then the line goes with what there is).
    // A gap between two looks (this process was stopped, or not scheduled) starts the wait
    // again: the sampler gets its 2 s from when this thread runs again, not from before the
    // stop.
    const bool fresh = !stale(snap);
    if (!fresh) {
      const auto now = std::chrono::steady_clock::now();
      if (!stale_since_ || now - last_stale_look_ > std::chrono::milliseconds(500))
        stale_since_ = now;
      last_stale_look_ = now;
      if (now - *stale_since_ < std::chrono::seconds(2)) return std::nullopt;
    }
    stale_since_.reset();
    const auto sent_until = sent_until_;
    const auto energy_bases = energy_base_.size();
    json line{{"v", kProtocolVersion}, {"ok", true}, {"line", sent_ + 1}};
    // The sampler's time, in seconds of its time base: `t` of the samples is relative to it.
    line["time"] = std::chrono::duration<double>(snap.time.time_since_epoch()).count();
    line["gpus"] = json::array();
    for (std::size_t k = 0; k < positions_.size(); ++k) line["gpus"].push_back(gpu_line(k, snap));
    auto text = line.dump();
    // Stopped (SIGSTOP) or starved while it built the line from a fresh snapshot: the line
    // would go out after the stop with the values of before it (seen with a sanitized service
    // under load). Undone once, and the wait above begins at the next look; a line that takes
    // that long to build every time goes out the second time. (A stop after this check, before
    // the line's send, still sends it late: a line carries its snapshot's `time`.)
    if (fresh && stale(snap) && !rebuilt_) {
      sent_until_ = sent_until;
      energy_base_.resize(energy_bases);
      rebuilt_ = true;
      return std::nullopt;
    }
    rebuilt_ = false;
    ++sent_;
    if (count_ && sent_ >= count_) {
      last = true;
      text += '\n';
      text += json{{"v", kProtocolVersion}, {"ok", true}, {"end", true}, {"lines", sent_}}.dump();
    }
    return text;
  }

 private:
  // The `k`th asked GPU's part of a line.
  json gpu_line(std::size_t k, const telemetry::Snapshot& snap) {
    const auto pos = positions_[k];
    const auto& g = snap.gpus.at(pos);
    json j = to_json(keys_.at(pos));
    j["lost"] = g.health.lost;
    if (g.fast) j["fast"] = to_json(*g.fast, snap.time);
    if (g.slow) j["slow"] = to_json(*g.slow, snap.time);
    if (g.previous_slow) j["previous_slow"] = to_json(*g.previous_slow, snap.time);
    // Energy since the stream opened: the counter's last read plus the power since, at both
    // ends (a service nobody streams from reads it every counters_every seconds).
    const auto energy = g.slow ? sampler_.energy_at(pos, snap.time) : std::nullopt;
    if (sent_ == 0) energy_base_.push_back(sampler_.energy_at(pos, opened_));
    if (energy && energy_base_[k]) j["energy_joules"] = (*energy - *energy_base_[k]).value();
    if (every_sample_) add_samples_since_last_line(k, snap.time, j);
    return j;
  }

  // "samples": "all": every fast and slow sample since the previous line (`gpuclk stat` builds
  // its summary from them, as the sampler does), from the rings (10 min deep).
  void add_samples_since_last_line(std::size_t k, TimePoint now, json& j) {
    const auto pos = positions_[k];
    auto& [fast_until, slow_until] = sent_until_[k];
    json fast = json::array(), slow = json::array();
    for (const auto& s : sampler_.fast_samples(pos, fast_until, now)) {
      if (s.time <= fast_until) continue;
      fast.push_back(to_json(s, now));
      fast_until = s.time;
    }
    for (const auto& s : sampler_.slow_samples(pos, slow_until, now)) {
      if (s.time <= slow_until) continue;
      slow.push_back(to_json(s, now));
      slow_until = s.time;
    }
    j["samples"] = std::move(fast);
    j["slow_samples"] = std::move(slow);
    const auto health = sampler_.health(pos);
    j["read_errors"] = health.read_errors;
    j["last_error"] = health.last_error;
    j["last_error_field"] = health.last_error_field;
    if (health.lost_at) j["lost_t"] = std::chrono::duration<double>(*health.lost_at - now).count();
  }

  // Older than two sampling intervals: the sampler has not ticked since (see next()).
  bool stale(const telemetry::Snapshot& snap) const {
    return sampler_.now() - snap.time > 2 * sampler_.options().fast_interval;
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

  const telemetry::Sampler& sampler_;
  StreamDemand& demand_;
  std::vector<gpu::DeviceKey> keys_;  // every GPU's, by position
  std::vector<std::size_t> positions_;
  std::chrono::nanoseconds wall_;
  std::optional<std::chrono::steady_clock::time_point> stale_since_;
  std::chrono::steady_clock::time_point last_stale_look_;  // when next() last found it stale
  bool rebuilt_ = false;  // the line being built was undone once (stopped mid-line)
  std::uint64_t count_, sent_ = 0;
  FieldSet wanted_;
  TimePoint opened_{};
  std::uint64_t opened_tick_ = 0;
  std::chrono::steady_clock::time_point give_up_waiting_;
  std::vector<std::optional<units::Joules>> energy_base_;
  bool every_sample_ = false;
  std::vector<std::pair<TimePoint, TimePoint>> sent_until_;  // last fast, slow sample sent
};

// The on-demand fields named by a request's "fields" (the sampler's own fields are always read);
// throws on a field the service does not sample.
FieldSet wanted_fields(const json& request, FieldSet sampled) {
  FieldSet wanted;
  for (const auto& name : request.value("fields", json::array())) {
    const auto text = name.get<std::string>();
    bool known = false;
    for (std::size_t i = 0; i < static_cast<std::size_t>(Field::count); ++i) {
      const auto f = static_cast<Field>(i);
      if (telemetry::field_name(f) != text) continue;
      known = kStreamOnDemand.has(f) || sampled.has(f);
      if (kStreamOnDemand.has(f)) wanted.add(f);
    }
    if (!known) {
      std::string valid;
      for (std::size_t i = 0; i < static_cast<std::size_t>(Field::count); ++i) {
        const auto f = static_cast<Field>(i);
        if (kStreamOnDemand.has(f) || sampled.has(f))
          valid += (valid.empty() ? "" : ", ") + std::string(telemetry::field_name(f));
      }
      throw bad_argument(fmt::format("the service does not sample '{}'", text), "valid: " + valid);
    }
  }
  return wanted;
}

}  // namespace

void StreamDemand::change(FieldSet fields, int delta) {
  std::lock_guard lock(mutex_);
  // Every open stream (dmon, stat) wants the counters each second, not every counters_every.
  streams_open_ += delta;
  sampler_.set_slow_full_rate(streams_open_ > 0);
  FieldSet wanted;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const auto f = static_cast<Field>(i);
    if (fields.has(f)) counts_[i] += delta;
    if (counts_[i] > 0) wanted.add(f);
  }
  sampler_.set_demand(wanted);
}

Streams::Streams(telemetry::Sampler& sampler, const Clock& clock, Duration sampling)
    : sampler_(sampler), clock_(clock), sampling_(sampling), demand_(sampler) {}

StreamOptions Streams::parse(const json& request) const {
  const double seconds = number_of(request, "interval_seconds", 1.0, 0, 86400);
  const double sampling = std::chrono::duration<double>(sampling_).count();
  if (!(seconds > 0) || seconds > 86400)
    throw bad_argument(
        fmt::format("interval_seconds must be > 0 and at most 86400, got {}", seconds));
  // 1 µs of slack: 0.1 s written by the client is the service's 100 ms.
  if (seconds < sampling - 1e-6)
    throw bad_argument(fmt::format("stream interval {} s is shorter than the service's sampling "
                                   "interval {} s",
                                   seconds, sampling),
                       "ask for a longer interval, or read NVML directly (gpuclk --direct dmon)");
  StreamOptions r;
  r.count = count_of(request, "count", 0, std::uint64_t{1} << 40);
  r.wanted = wanted_fields(request, sampler_.options().fields);
  const auto samples = string_of(request, "samples", "latest");
  if (samples != "latest" && samples != "all")
    throw bad_argument(fmt::format("unknown samples '{}'", samples), "valid: latest, all");
  r.every_sample = samples == "all";
  const auto interval =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  r.wall = clock_.wall_time_until(clock_.now() + interval).value_or(interval);
  return r;
}

std::unique_ptr<Stream> Streams::open(const StreamOptions& request,
                                      std::vector<std::size_t> positions,
                                      std::vector<gpu::DeviceKey> keys) {
  return std::make_unique<SampleStream>(sampler_, clock_, demand_, std::move(keys),
                                        std::move(positions), request);
}

ViewWait::ViewWait(std::string name, Answer answer, std::function<bool()> running)
    : name_(std::move(name)),
      answer_(std::move(answer)),
      running_(std::move(running)),
      give_up_(std::chrono::steady_clock::now() + kViewWait) {}

std::optional<std::string> ViewWait::next(bool& last) {
  const auto text = answer_();
  if (!text && std::chrono::steady_clock::now() < give_up_ && running_()) return std::nullopt;
  last = true;
  if (!text) {
    return error_response(fmt::format("the service did not refresh view '{}'", name_),
                          static_cast<int>(ExitCode::other))
        .dump();
  }
  return *text;
}

}  // namespace gpuclk::serve
