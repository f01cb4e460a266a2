// Shared by the files that implement the NVML entry points: prototypes from the X-macro (so a
// signature that differs from src/nvml/nvml_abi.h is a compile error), the generated prototypes
// of every entry point and model getter (entry_points.txt), device handles, and the wrappers
// every call goes through (init check, handle check, time sync, faults).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>

#include "entry_points.gen.h"
#include "nvml/nvml_abi.h"
#include "sim_context.h"

#define GPUCLK_SIM_EXPORT extern "C" __attribute__((visibility("default")))
#define GPUCLK_SIM_DECLARE(name, params, args) GPUCLK_SIM_EXPORT nvmlReturn_t name params;
GPUCLK_NVML_ALL(GPUCLK_SIM_DECLARE)
#undef GPUCLK_SIM_DECLARE

// What a device handle points to: one slot per simulated GPU, valid for the process's lifetime.
struct nvmlDevice_st {
  std::uint32_t index;
};

namespace gpuclk::sim::abi {

inline constexpr std::uint32_t kMaxGpus = 64;

nvmlDevice_t handle_of(std::size_t index);

// The model's configuration, spec and state of GPU i (inside a call, under the context's lock).
inline const GpuConfig& config_of(std::size_t i) { return Context::get().model().config(i); }
inline const GpuSpec& spec_of(std::size_t i) { return *config_of(i).spec; }
inline const GpuState& state_of(std::size_t i) { return Context::get().model().gpu(i); }
// The GPU a handle names, or nullopt for a pointer that is not one of ours or past the count.
std::optional<std::size_t> index_of(nvmlDevice_t device);

nvmlReturn_t to_nvml(Status status);

// How far apart two GPUs are on the PCIe tree (nvmlDeviceGetTopologyCommonAncestor).
nvmlGpuTopologyLevel_t topology_level(std::size_t a, std::size_t b);

// How a call may be hit by injected faults: telemetry reads take random read errors too.
enum class Access { identity, telemetry, write };

// Runs body(index) for a valid, initialized, present GPU with the model synced to now.
template <typename Body>
nvmlReturn_t with_gpu(nvmlDevice_t device, const char* function, Access access, Body&& body) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  const std::optional<std::size_t> index = index_of(device);
  if (!index) return NVML_ERROR_INVALID_ARGUMENT;
  try {
    context.sync();
    if (context.model().gpu(*index).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
    if (access != Access::write) {
      if (auto injected = context.injected_error(*index, function, access == Access::telemetry)) {
        return *injected;
      }
    }
    return body(*index);
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Runs body(context) once the library is initialized (system-wide calls).
template <typename Body>
nvmlReturn_t with_system(Body&& body) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  try {
    return body(context);
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Copies a NUL-terminated string into an NVML caller's buffer.
inline nvmlReturn_t copy_string(std::string_view value, char* buffer, unsigned int length) {
  if (!buffer) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < value.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, value.data(), value.size());
  buffer[value.size()] = '\0';
  return NVML_SUCCESS;
}

// Fills an NVML (count, array) pair: INSUFFICIENT_SIZE with the needed count when it is short.
template <typename T, typename Values>
nvmlReturn_t copy_array(const Values& values, unsigned int* count, T* out) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  const auto needed = static_cast<unsigned int>(values.size());
  if (*count < needed || (!out && needed > 0)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int i = 0; i < needed; ++i) out[i] = static_cast<T>(values[i]);
  *count = needed;
  return NVML_SUCCESS;
}

inline unsigned int to_mw(double watts) {
  return watts <= 0 ? 0u : static_cast<unsigned int>(std::lround(watts * 1000.0));
}

}  // namespace gpuclk::sim::abi
