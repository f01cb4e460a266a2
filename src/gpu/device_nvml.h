// What device.cpp and device_probe.cpp share: one NVML call's answer as a Reading (outside the
// capability cache), and NVML's clock type of a domain.
#pragma once

#include "gpu/device.h"
#include "nvml/api.h"

namespace gpuclk::gpu::detail {

// One NVML read outside the capability cache (Identity, the probes, rare reads).
template <class T, class Call>
Reading<T> probe(Call&& call) {
  T value{};
  nvmlReturn_t rc = call(value);
  if (rc == NVML_SUCCESS) return value;
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
    return Reading<T>::not_supported();
  }
  return Reading<T>::error(rc);
}

inline nvmlClockType_t to_nvml(ClockDomain d) { return static_cast<nvmlClockType_t>(d); }

}  // namespace gpuclk::gpu::detail
