#include "gpu/events.h"

#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

using nvml::Api;

// The event types gpuclk watches, with their kind (NVML's event type bits).
struct KindBit {
  EventKind kind;
  unsigned long long bit;
};
constexpr KindBit kKinds[] = {{EventKind::xid, nvmlEventTypeXidCriticalError},
                              {EventKind::double_bit_ecc, nvmlEventTypeDoubleBitEccError},
                              {EventKind::single_bit_ecc, nvmlEventTypeSingleBitEccError}};

std::vector<EventKind> kinds_of(unsigned long long mask) {
  std::vector<EventKind> out;
  for (const auto& k : kKinds) {
    if (mask & k.bit) out.push_back(k.kind);
  }
  return out;
}

}  // namespace

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::xid:
      return "xid";
    case EventKind::double_bit_ecc:
      return "double_bit_ecc";
    case EventKind::single_bit_ecc:
      return "single_bit_ecc";
  }
  return "xid";
}

EventWatcher::EventWatcher(const std::vector<Device*>& devices, const Clock& clock)
    : clock_(clock) {
  using Kinds = Reading<std::vector<EventKind>>;
  unsigned long long wanted = 0;
  for (const auto& k : kKinds) wanted |= k.bit;
  for (const Device* d : devices) {
    Watch w{d->index(), d, Kinds::not_supported()};
    if (!d->available()) {
      w.kinds = Kinds::error(d->identity().unavailable_code);
      watches_.push_back(std::move(w));
      continue;
    }
    const Api& api = d->api();
    unsigned long long supported = 0;
    nvmlReturn_t rc = Api::call(api.nvmlDeviceGetSupportedEventTypes, d->handle(), &supported);
    unsigned long long mask = supported & wanted;
    if (rc == NVML_SUCCESS && mask != 0 && !set_) {
      rc = Api::call(api.nvmlEventSetCreate, &set_);
      if (rc != NVML_SUCCESS) set_ = nullptr;
    }
    if (rc == NVML_SUCCESS && mask != 0) {
      rc = Api::call(api.nvmlDeviceRegisterEvents, d->handle(), mask, set_);
      // Some drivers refuse the ECC types with ECC off although they list them: Xid alone.
      if (rc == NVML_ERROR_NOT_SUPPORTED && (mask & nvmlEventTypeXidCriticalError) &&
          mask != nvmlEventTypeXidCriticalError) {
        mask = nvmlEventTypeXidCriticalError;
        rc = Api::call(api.nvmlDeviceRegisterEvents, d->handle(), mask, set_);
      }
    }
    if (rc == NVML_SUCCESS && mask != 0) {
      w.kinds = kinds_of(mask);
      ++watching_;
    } else if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED &&
               rc != NVML_ERROR_FUNCTION_NOT_FOUND) {
      w.kinds = Kinds::error(rc);
    }
    watches_.push_back(std::move(w));
  }
}

EventWatcher::~EventWatcher() {
  if (set_ && !watches_.empty()) {
    Api::call(watches_.front().device->api().nvmlEventSetFree, set_);
  }
}

Reading<std::vector<EventKind>> EventWatcher::watched(unsigned index) const {
  for (const auto& w : watches_) {
    if (w.index == index) return w.kinds;
  }
  return Reading<std::vector<EventKind>>::not_supported();
}

std::optional<GpuEvent> EventWatcher::wait(std::chrono::milliseconds timeout) {
  if (!any_watched()) {
    std::this_thread::sleep_for(timeout);
    return std::nullopt;
  }
  const Api& api = watches_.front().device->api();
  nvmlEventData_t data{};
  const nvmlReturn_t rc =
      Api::call(api.nvmlEventSetWait_v2, set_, &data, static_cast<unsigned>(timeout.count()));
  if (rc == NVML_ERROR_TIMEOUT) return std::nullopt;
  if (rc != NVML_SUCCESS) {
    last_error_ = rc;
    // A failed wait may return at once (a GPU of the set lost): do not spin.
    std::this_thread::sleep_for(timeout);
    return std::nullopt;
  }
  const Watch* from = nullptr;
  for (const auto& w : watches_) {
    if (w.device->handle() == data.device) from = &w;
  }
  const auto kinds = kinds_of(data.eventType);
  if (!from || kinds.empty()) return std::nullopt;  // not one of ours, or a type not asked for
  GpuEvent e;
  e.gpu = from->index;
  e.kind = kinds.front();
  e.xid = e.kind == EventKind::xid ? data.eventData : 0;
  e.time = clock_.now();
  return e;
}

}  // namespace gpuclk::gpu
