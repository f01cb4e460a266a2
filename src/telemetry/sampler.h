// Sampler: reads every GPU on a schedule into per-GPU ring buffers; consumers (dmon, stat, bench
// reports, the exporter, doctor, the governor) read snapshots, windows and summaries from it.
//
// Threads: one fast thread reads the fast fields of all GPUs every `fast_interval`; one slow
// thread per GPU reads its slow fields every `slow_interval`, phase-shifted just after a fast
// tick so its milliseconds-long reads finish before the next one. A GPU that is lost is marked
// and no longer read; the others go on. Ticks follow a fixed schedule (start + k × interval,
// in Clock time); a tick that cannot be kept is skipped, not run late twice.
//
// Times are the given Clock's (simulated time under --sim); a clock that stands still (a frozen
// simulator, GPUCLK_SIM_SPEED=0) is replaced by wall time, so ticks still come.
// Thread-safety: every const member may be called from any thread while the sampler runs.
// start()/stop() from one controlling thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "telemetry/fields.h"
#include "telemetry/ring_buffer.h"
#include "telemetry/source.h"
#include "telemetry/summary.h"

namespace gpuclk::gpu {
class Device;
}

namespace gpuclk::telemetry {

struct SamplerOptions {
  Duration fast_interval = std::chrono::milliseconds(100);
  Duration slow_interval = std::chrono::seconds(1);  // rounded up to whole fast intervals
  FieldSet fields = FieldSet::standard();
  std::size_t fast_capacity = 6000;  // samples kept per GPU (10 min at 100 ms)
  std::size_t slow_capacity = 1200;
  // Read only while asked for (set_demand), on top of `fields`: the service reads dmon's extra
  // columns (media utilization, BAR1, PCIe throughput) only while a dmon streams them.
  FieldSet on_demand;
  // While nobody wants the slow tier at full rate (set_slow_full_rate), read it only every this
  // many slow intervals (1: always at full rate). The service's counters (energy, violation
  // time, ECC, replays) are cumulative, so their totals lose nothing, only time resolution.
  unsigned slow_idle_every = 1;
};

// The latest readings of one GPU.
struct GpuSnapshot {
  GpuInfo info;
  GpuHealth health;
  std::optional<FastSample> fast;
  std::optional<SlowSample> slow, previous_slow;  // the last two, for rates (violation %)
};

struct Snapshot {
  TimePoint time{};
  std::uint64_t tick = 0;  // fast ticks completed
  std::vector<GpuSnapshot> gpus;
};

// How well the fast schedule was kept (jitter) and what a tick cost, over the last 4096 samples.
struct TimingStats {
  std::uint64_t ticks = 0, missed_ticks = 0;
  Duration lateness_p50{}, lateness_p99{}, lateness_max{};  // sample time - scheduled time
  Duration tick_cost_mean{}, tick_cost_p99{};               // all GPUs' fast reads, Clock time
};

class Sampler {
 public:
  Sampler(std::vector<std::unique_ptr<GpuSource>> sources, const Clock& clock,
          SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Reads the counters (energy, violation time, GPM) of every GPU once, then starts the
  // threads; the first fast tick and slow reads happen at once.
  void start();
  // Stops the threads, then reads every GPU once more (fast fields, energy and violation
  // counters, GPM), so each GPU's summary ends exactly at its closing read. Idempotent.
  void stop();
  bool running() const { return running_.load(); }

  const SamplerOptions& options() const { return options_; }
  std::size_t gpu_count() const { return gpus_.size(); }
  const GpuInfo& info(std::size_t gpu) const;
  TimePoint started_at() const { return started_at_; }
  // The time of the last sample when stopped, else now.
  TimePoint now() const;

  Snapshot snapshot() const;
  GpuHealth health(std::size_t gpu) const;
  std::vector<FastSample> fast_samples(std::size_t gpu, TimePoint from, TimePoint to) const;
  std::vector<SlowSample> slow_samples(std::size_t gpu, TimePoint from, TimePoint to) const;
  // Since start() (whole run; not limited by the ring buffers). After stop(), each GPU's window
  // ends at its own closing counter read, so its energy and its seconds cover the same span.
  Summary summary(std::size_t gpu) const;
  // Over [from, to], from the samples still in the ring buffers.
  Summary summary(std::size_t gpu, TimePoint from, TimePoint to) const;
  TimingStats timing() const;
  // The energy counter as it would read at `t`: its last read at or before `t` plus the power
  // readings' integral from that read to `t` (each reading held until the next, as a summary's
  // edges are). The counters are read every slow interval, or every few seconds in a service
  // nobody streams from: an energy since a moment counts from that moment, not from a read up to
  // seconds before it. nullopt without a counter read in the rings' last two minutes.
  std::optional<Joules> energy_at(std::size_t gpu, TimePoint t) const;

  // Reads these of options().on_demand too (others are ignored): fast fields from the next tick,
  // slow ones from the next slow read, until the next call. Any thread.
  void set_demand(FieldSet fields);
  // The slow tier at every slow interval (true) or every options().slow_idle_every (false); a
  // change takes effect at the next slow slot.
  void set_slow_full_rate(bool full) { slow_full_rate_ = full; }
  // Reads every GPU's slow fields (the energy counter among them) once more now, on the slow
  // threads, beside their schedule; returns at once. `gpuclk stat` through the service asks it at
  // its command's start and end, so the counter is read there as its own sampler would.
  void read_slow_now();
  FieldSet demand() const { return demand_.load(); }

  // Blocks until fast tick `seen` + 1 or later has completed, at most `wall_timeout`
  // (real time). Returns the number of completed ticks (== seen on timeout or after stop()).
  std::uint64_t wait_for_tick(std::uint64_t seen, std::chrono::milliseconds wall_timeout) const;

  // One fast tick / one slow read now, without threads (tests, and start/stop); not counted in
  // timing().
  void sample_fast_once(TimePoint scheduled);
  // The read's time; nullopt when the GPU is (or just got) lost.
  std::optional<TimePoint> sample_slow_once(std::size_t gpu, const FieldSet& fields);

 private:
  struct Gpu;
  void fast_loop();
  void fast_tick(TimePoint scheduled, bool record_timing);
  void slow_loop(std::size_t gpu);
  // Sleeps until `deadline` (Clock time) or stop(); false when stop() was asked.
  bool sleep_until(TimePoint deadline) const;
  // The same, also returning (true) when read_slow_now() was called since `seen`.
  bool sleep_until(TimePoint deadline, std::uint64_t seen) const;
  void record_failure(Gpu& g, const ReadOutcome& outcome, TimePoint when);
  // The slow fields read at start() and stop(): what makes whole-run figures exact.
  FieldSet counter_fields() const;

  ScaledClock wall_clock_{1.0};
  const Clock& clock_;  // the caller's, or wall_clock_ when the caller's stands still
  SamplerOptions options_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  TimePoint started_at_{};
  std::optional<TimePoint> stopped_at_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<FieldSet> demand_{FieldSet{}};
  std::atomic<bool> slow_full_rate_{false};
  std::atomic<std::uint64_t> read_slow_now_{0};  // read_slow_now() calls, each slow thread follows
  mutable std::mutex stop_mutex_;                // with stop_cv_: stop() wakes the sleeping threads
  mutable std::condition_variable stop_cv_;
  std::thread fast_thread_;

  mutable std::mutex tick_mutex_;
  mutable std::condition_variable tick_cv_;
  std::uint64_t ticks_ = 0;
  std::uint64_t missed_ticks_ = 0;
  RingBuffer<Duration> lateness_{4096}, tick_cost_{4096};
};

// The sampler's sources for gpu::Devices (each must outlive the sampler).
std::vector<std::unique_ptr<GpuSource>> device_sources(
    const std::vector<gpu::Device*>& devices, const FieldSet& fields,
    Duration nvlink_error_period = kNvLinkErrorPeriod);

}  // namespace gpuclk::telemetry
