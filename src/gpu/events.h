// NVML events: the driver's Xid critical errors and ECC error events, as they happen.
//
// An EventWatcher registers each GPU for the critical event types it supports (Xid critical
// error, double-bit ECC, single-bit ECC) in one NVML event set, and wait() returns the next
// event, typed and stamped with the caller's clock (NVML's event carries no time). A GPU or
// driver without events is not an error: watched() says not_supported and wait() only ever
// times out. Not thread-safe: one owner waits (doctor's event thread); frees the set when
// destroyed. Only this file's .cpp knows NVML's event types.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gpu/reading.h"
#include "util/clock.h"

struct nvmlEventSet_st;

namespace gpuclk::gpu {

class Device;

enum class EventKind {
  xid,             // an Xid critical error (the driver's error code, as in `dmesg`)
  double_bit_ecc,  // an uncorrectable (double-bit) ECC error
  single_bit_ecc,  // a corrected (single-bit) ECC error
};
std::string_view to_string(EventKind kind);  // "xid", "double_bit_ecc", "single_bit_ecc"

struct GpuEvent {
  unsigned gpu = 0;  // the GPU's index
  EventKind kind = EventKind::xid;
  std::uint64_t xid = 0;    // the Xid for EventKind::xid, else 0
  Clock::TimePoint time{};  // when wait() received it (the clock given to the watcher)
};

class EventWatcher {
 public:
  // Registers every device of `devices` (a lost one or one without events is left out, see
  // watched()). `clock` stamps the events; it must outlive the watcher.
  EventWatcher(const std::vector<Device*>& devices, const Clock& clock);
  ~EventWatcher();
  EventWatcher(const EventWatcher&) = delete;
  EventWatcher& operator=(const EventWatcher&) = delete;

  // The kinds watched on GPU `index`: not_supported when the driver or the GPU has no such
  // events, error with the NVML code when registering failed (a lost GPU: 15).
  Reading<std::vector<EventKind>> watched(unsigned index) const;
  // True when at least one GPU is watched.
  bool any_watched() const { return set_ != nullptr && watching_ > 0; }

  // Waits up to `timeout` (wall time) for the next event of any watched GPU; nullopt on timeout,
  // when nothing is watched (after sleeping `timeout`), or when the wait failed (the failure is
  // kept: last_error()).
  std::optional<GpuEvent> wait(std::chrono::milliseconds timeout);
  // The NVML code of the last failed wait (0 when none failed).
  int last_error() const { return last_error_; }

 private:
  struct Watch {
    unsigned index = 0;
    const Device* device = nullptr;
    Reading<std::vector<EventKind>> kinds;
  };
  const Clock& clock_;
  nvmlEventSet_st* set_ = nullptr;
  std::vector<Watch> watches_;
  std::size_t watching_ = 0;
  int last_error_ = 0;
};

}  // namespace gpuclk::gpu
