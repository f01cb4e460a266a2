// The service's Xid event log: a thread waits on an NVML event set of every GPU
// (gpu::EventWatcher) and keeps the Xid and ECC events it receives, the last kEventsKept and none
// older than `history`, so `doctor` can look back at them (the `history` request's "events");
// and, for /metrics, each GPU's Xid counts and its last Xid since the service started.
//
// Owns the watcher, the event thread and what it received. start() registers every GPU once (a
// GPU without events, or lost, is left out) and starts the thread when any GPU is watched;
// stop() ends it within one wait (kEventWait: NVML's wait cannot be interrupted).
//
// Thread-safety: start() and stop() from one controlling thread; events(), xid_counts() and
// last_xid() from any thread while it runs; watched() from any thread after start() (set there,
// unchanged after).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "gpu/device.h"
#include "gpu/events.h"
#include "telemetry/sample.h"
#include "util/clock.h"

namespace gpuclk::serve {

// The most NVML events (Xid, ECC) the service keeps, all GPUs together.
inline constexpr std::size_t kEventsKept = 4096;

class EventLog {
 public:
  // `devices`: the service's GPUs, by position; `clock` stamps the events (it must outlive the
  // log); `history`: how long an event is kept.
  EventLog(std::vector<gpu::Device*> devices, const Clock& clock, telemetry::Duration history);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void start();
  // Asks the thread to end after its current wait, without waiting for it: stop() then returns
  // sooner when the caller stops other parts in between.
  void request_stop();
  void stop();  // request_stop(), then waits for the thread; idempotent

  // The events of GPU `gpu` (a position) received at `from` or later, oldest first
  // (GpuEvent::gpu is the GPU's index).
  std::vector<gpu::GpuEvent> events(std::size_t gpu, telemetry::TimePoint from) const;
  // The event kinds watched on GPU `gpu` (a position); empty when none (not supported, lost)
  // or before start().
  const std::vector<gpu::EventKind>& watched(std::size_t gpu) const;
  // Xid events of GPU `gpu` (a position) since start(), by Xid (not bounded by the kept
  // events: a counter for /metrics).
  std::map<std::uint64_t, std::uint64_t> xid_counts(std::size_t gpu) const;
  // The code of GPU `gpu`'s (a position) last Xid event since start(); nullopt before its first.
  std::optional<std::uint64_t> last_xid(std::size_t gpu) const;

 private:
  void loop(const std::stop_token& stop);

  std::vector<gpu::Device*> devices_;
  std::vector<unsigned> indexes_;  // each position's NVML index
  const Clock& clock_;
  telemetry::Duration history_;
  std::unique_ptr<gpu::EventWatcher> watcher_;
  std::vector<std::vector<gpu::EventKind>> watched_;  // by position
  mutable std::mutex mutex_;
  std::deque<gpu::GpuEvent> events_;                                // oldest first
  std::vector<std::map<std::uint64_t, std::uint64_t>> xid_counts_;  // by position
  std::vector<std::optional<std::uint64_t>> last_xid_;              // by position
  std::jthread thread_;
};

}  // namespace gpuclk::serve
