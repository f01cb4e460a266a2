// Test doubles for the sampler: a clock the test moves by hand, and a GPU source whose readings
// are functions of time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "telemetry/source.h"
#include "util/clock.h"

namespace gpuclk::telemetry::testing {

using namespace std::chrono_literals;

// Time stands still until advance(); sleep_until jumps to the deadline (single-threaded tests).
class ManualClock final : public Clock {
 public:
  TimePoint now() const override {
    std::scoped_lock lock(mutex_);
    return now_;
  }
  void sleep_until(TimePoint deadline) const override {
    std::scoped_lock lock(mutex_);
    if (deadline > now_) now_ = deadline;
  }
  void advance(Duration d) {
    std::scoped_lock lock(mutex_);
    now_ += d;
  }
  void set(TimePoint t) {
    std::scoped_lock lock(mutex_);
    now_ = t;
  }

 private:
  mutable std::mutex mutex_;
  mutable TimePoint now_{std::chrono::seconds(1000)};
};

inline double seconds_since(TimePoint origin, TimePoint t) {
  return std::chrono::duration<double>(t - origin).count();
}

// Readings as functions of the sample time; counters integrate nothing by themselves: the test
// gives energy(t) directly.
class ScriptedSource final : public GpuSource {
 public:
  std::function<void(TimePoint, FastSample&)> fast = [](TimePoint, FastSample&) {};
  std::function<void(TimePoint, SlowSample&)> slow = [](TimePoint, SlowSample&) {};
  std::function<TimePoint()> lost_from;          // reads at or after this time report the GPU lost
  std::chrono::milliseconds slow_read_delay{0};  // wall time a slow read takes
  GpuInfo gpu_info;
  std::atomic<int> fast_reads{0}, slow_reads{0};
  FieldSet last_fast_fields;  // what the last read_fast was asked for (manual ticks only)

  GpuInfo info() const override { return gpu_info; }
  ReadOutcome read_fast(const FieldSet& fields, FastSample& s) override {
    ++fast_reads;
    last_fast_fields = fields;
    if (is_lost(s.time)) return lost();
    fast(s.time, s);
    return {};
  }
  ReadOutcome read_slow(const FieldSet&, SlowSample& s) override {
    ++slow_reads;
    if (slow_read_delay.count()) std::this_thread::sleep_for(slow_read_delay);
    if (is_lost(s.time)) return lost();
    slow(s.time, s);
    return {};
  }

 private:
  bool is_lost(TimePoint t) const { return lost_from && t >= lost_from(); }
  static ReadOutcome lost() {
    ReadOutcome o;
    o.errors = 1;
    o.last_error = 15;
    o.lost = true;
    return o;
  }
};

}  // namespace gpuclk::telemetry::testing
