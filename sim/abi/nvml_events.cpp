// NVML events: a set registers GPUs for event types; a wait returns the next event the model
// raised since the registration or the last event taken, or TIMEOUT. The model raises
//   Xid 79 (nvmlEventTypeXidCriticalError) when a GPU falls off the bus (the scenario's lost_at_s),
//   nvmlEventTypeDoubleBitEccError / SingleBitEccError when its uncorrected / corrected ECC
//   counters grow (the scenario's `ecc` rates).
// P-state and MIG-configuration events are supported (registering succeeds, as on the real card)
// but never raised: the model stays in P0 and never changes MIG mode.
#include <chrono>
#include <cstddef>
#include <exception>
#include <mutex>
#include <set>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

struct nvmlEventSet_st {
  // One registered GPU: the types asked for and the counters already reported.
  struct Watch {
    std::size_t gpu = 0;
    unsigned long long types = 0;
    std::uint64_t corrected = 0;
    std::uint64_t uncorrected = 0;
    bool lost = false;
  };
  std::vector<Watch> watches;
};

namespace {

constexpr unsigned long long kXidFallenOffTheBus = 79;

// The live sets, so a freed or foreign pointer is INVALID_ARGUMENT rather than a crash.
// Guarded by the context's mutex.
std::set<nvmlEventSet_t>& live_sets() {
  static std::set<nvmlEventSet_t> sets;
  return sets;
}

bool is_live(nvmlEventSet_t set) { return set && live_sets().count(set) > 0; }

// The next event for one watch, or nullopt; marks it reported.
std::optional<nvmlEventData_t> next_event(nvmlEventSet_st::Watch& watch) {
  const GpuDynamics& d = Context::get().model().gpu(watch.gpu).dynamics;
  nvmlEventData_t event{};
  event.device = handle_of(watch.gpu);
  if ((watch.types & nvmlEventTypeXidCriticalError) && d.lost && !watch.lost) {
    watch.lost = true;
    event.eventType = nvmlEventTypeXidCriticalError;
    event.eventData = kXidFallenOffTheBus;
    return event;
  }
  if ((watch.types & nvmlEventTypeDoubleBitEccError) &&
      d.ecc_uncorrected_volatile > watch.uncorrected) {
    watch.uncorrected = d.ecc_uncorrected_volatile;
    event.eventType = nvmlEventTypeDoubleBitEccError;
    return event;
  }
  if ((watch.types & nvmlEventTypeSingleBitEccError) &&
      d.ecc_corrected_volatile > watch.corrected) {
    watch.corrected = d.ecc_corrected_volatile;
    event.eventType = nvmlEventTypeSingleBitEccError;
    return event;
  }
  return std::nullopt;
}

// One look at the set, under the library's lock, at the model as it stands: an event, or TIMEOUT
// when there is none yet.
nvmlReturn_t look(nvmlEventSet_t set, nvmlEventData_t* data) {
  if (!is_live(set) || !data) return NVML_ERROR_INVALID_ARGUMENT;
  for (nvmlEventSet_st::Watch& watch : set->watches) {
    if (auto event = next_event(watch)) {
      *data = *event;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_TIMEOUT;
}

// Waits up to timeout_ms of wall time, as the driver's wait blocks until an event comes. The
// model moves when some thread calls in (the service's sampler does ten times a second); that
// call raises the model's events and wakes this wait (Context::note_events), so the wait sleeps
// without the lock and does not step the model itself while others keep it current. A waiter
// that is alone (the last sync was its own, or nobody synced for kOthersQuiet) syncs every
// kLookEvery, so a scenario's Xid or ECC error, or one written by another process, is seen
// within that. (Polling every 10 ms cost the service's event thread 1.0 % of a core on 8
// simulated GPUs; syncing itself every 100 ms, 0.17 %: a second stepper of the model and its
// state file; now it wakes when its caller's timeout ends, like the driver's.)
nvmlReturn_t wait_for_event(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kLookEvery = std::chrono::milliseconds(250);
  constexpr auto kOthersQuiet = std::chrono::seconds(1);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Context& context = Context::get();
  std::unique_lock<std::recursive_mutex> lock(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  try {
    for (;;) {
      const Clock::time_point now = Clock::now();
      const bool alone =
          context.synced_by_this_thread() || now - context.synced_at() >= kOthersQuiet;
      if (alone && now - context.synced_at() >= kLookEvery) context.sync();
      const nvmlReturn_t status = look(set, data);
      if (status != NVML_ERROR_TIMEOUT) return status;
      if (now >= deadline) return NVML_ERROR_TIMEOUT;
      const auto next_look = context.synced_at() + (alone ? kLookEvery : kOthersQuiet);
      context.wait_for_change(lock, context.events_raised(), std::min(deadline, next_look));
    }
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

}  // namespace

namespace gpuclk::sim::abi::get {

nvmlReturn_t supported_event_types(std::size_t i, unsigned long long* types) {
  // ASSUMPTION: the calibration card's mask was not recorded; these are the types NVML documents
  // for a data-centre GPU of this kind (ECC ones only with ECC, MIG changes only with MIG).
  const GpuSpec& spec = *Context::get().model().config(i).spec;
  *types = nvmlEventTypePState | nvmlEventTypeXidCriticalError;
  if (spec.ecc_supported) *types |= nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
  if (spec.mig_supported) *types |= nvmlEventMigConfigChange;
  return NVML_SUCCESS;
}

nvmlReturn_t register_events(std::size_t i, unsigned long long types, nvmlEventSet_t set) {
  if (!is_live(set)) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long supported = 0;
  supported_event_types(i, &supported);
  if ((types & ~supported) != 0) return NVML_ERROR_NOT_SUPPORTED;
  const GpuDynamics& d = Context::get().model().gpu(i).dynamics;
  for (nvmlEventSet_st::Watch& watch : set->watches) {
    if (watch.gpu == i) {
      watch.types |= types;
      return NVML_SUCCESS;
    }
  }
  set->watches.push_back({i, types, d.ecc_corrected_volatile, d.ecc_uncorrected_volatile, false});
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return with_system([&](Context&) -> nvmlReturn_t {
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    *set = new nvmlEventSet_st;
    live_sets().insert(*set);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return with_system([&](Context&) -> nvmlReturn_t {
    if (!is_live(set)) return NVML_ERROR_INVALID_ARGUMENT;
    live_sets().erase(set);
    delete set;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                   unsigned int timeout_ms) {
  return wait_for_event(set, data, timeout_ms);
}

// The first layout ends after eventData: nothing is written past it.
GPUCLK_SIM_EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                                unsigned int timeout_ms) {
  if (!data) return wait_for_event(set, data, timeout_ms);
  nvmlEventData_t full{};
  const nvmlReturn_t status = wait_for_event(set, &full, timeout_ms);
  if (status == NVML_SUCCESS) std::memcpy(data, &full, offsetof(nvmlEventData_t, gpuInstanceId));
  return status;
}
