// Writes: persistence mode, application clocks, locked clocks, power limit. Each goes through
// Context::mutate, so it lands in the shared state file before the call returns.
#include "abi_common.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

template <typename Apply>
nvmlReturn_t write(nvmlDevice_t device, const char* function, Apply&& apply) {
  return with_gpu(device, function, Access::write, [&](std::size_t i) {
    if (auto injected = Context::get().injected_error(i, function, false)) return *injected;
    return to_nvml(Context::get().mutate([&](NodeModel& model) { return apply(model, i); }));
  });
}

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device,
                                                            nvmlEnableState_t mode) {
  if (mode != NVML_FEATURE_ENABLED && mode != NVML_FEATURE_DISABLED) {
    return with_gpu(device, __func__, Access::write,
                    [](std::size_t) { return NVML_ERROR_INVALID_ARGUMENT; });
  }
  return write(device, __func__, [&](NodeModel& m, std::size_t i) {
    return m.set_persistence_mode(i, mode == NVML_FEATURE_ENABLED);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t device,
                                                               unsigned int memory_mhz,
                                                               unsigned int graphics_mhz) {
  return write(device, __func__, [&](NodeModel& m, std::size_t i) {
    return m.set_applications_clocks(i, memory_mhz, graphics_mhz);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t device) {
  return write(device, __func__,
               [&](NodeModel& m, std::size_t i) { return m.reset_applications_clocks(i); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device,
                                                            unsigned int min_mhz,
                                                            unsigned int max_mhz) {
  return write(device, __func__,
               [&](NodeModel& m, std::size_t i) { return m.lock_gpu_clocks(i, min_mhz, max_mhz); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return write(device, __func__,
               [&](NodeModel& m, std::size_t i) { return m.reset_gpu_locked_clocks(i); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device,
                                                               unsigned int min_mhz,
                                                               unsigned int max_mhz) {
  return write(device, __func__, [&](NodeModel& m, std::size_t i) {
    return m.lock_memory_clocks(i, min_mhz, max_mhz);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  return write(device, __func__,
               [&](NodeModel& m, std::size_t i) { return m.reset_memory_locked_clocks(i); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device,
                                                                 unsigned int milliwatts) {
  return write(device, __func__,
               [&](NodeModel& m, std::size_t i) { return m.set_power_limit(i, milliwatts); });
}
