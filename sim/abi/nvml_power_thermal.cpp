// Power, energy, limits, temperatures, fan and utilization.
#include <cmath>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

const GpuSpec& spec_of(std::size_t i) { return *Context::get().model().config(i).spec; }
const GpuState& state_of(std::size_t i) { return Context::get().model().gpu(i); }

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                       unsigned int* milliwatts) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
    // Ampere (but GA100) and later report the 1 s average here; older parts the instant power.
    const GpuState& s = state_of(i);
    *milliwatts =
        to_mw(spec_of(i).power_average_supported ? average_power_w(s) : s.dynamics.power_w);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                                 unsigned int* milliwatts) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
    *milliwatts = state_of(i).settings.power_limit_mw;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(
    nvmlDevice_t device, unsigned int* min_milliwatts, unsigned int* max_milliwatts) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!min_milliwatts || !max_milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
    *min_milliwatts = to_mw(spec_of(i).power_limit_min_w);
    *max_milliwatts = to_mw(spec_of(i).power_limit_max_w);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                                        unsigned int* milliwatts) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
    *milliwatts = to_mw(spec_of(i).power_limit_default_w);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device,
                                                               unsigned int* milliwatts) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
    *milliwatts = state_of(i).settings.power_limit_mw;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!millijoules) return NVML_ERROR_INVALID_ARGUMENT;
    *millijoules = static_cast<unsigned long long>(state_of(i).dynamics.energy_j * 1000.0);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                        nvmlTemperatureSensors_t sensor,
                                                        unsigned int* celsius) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!celsius || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    *celsius = static_cast<unsigned int>(std::max(0.0, std::round(state_of(i).dynamics.die_c)));
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(
    nvmlDevice_t device, nvmlTemperatureThresholds_t threshold, unsigned int* celsius) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!celsius) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuSpec& spec = spec_of(i);
    double value = 0;
    switch (threshold) {
      case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
        value = spec.shutdown_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
        value = spec.slowdown_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
        value = spec.memory_max_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
        value = spec.gpu_max_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN:
      case NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR:
      case NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX:
        return NVML_ERROR_NOT_SUPPORTED;
      default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *celsius = static_cast<unsigned int>(std::lround(value));
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* percent) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!percent) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuSpec& spec = spec_of(i);
    if (!spec.has_fan) return NVML_ERROR_NOT_SUPPORTED;
    // A fan curve: 30 % up to 40 °C, 100 % at the GPU max temperature.
    const double t = state_of(i).dynamics.die_c;
    const double x = std::clamp((t - 40.0) / std::max(1.0, spec.gpu_max_c - 40.0), 0.0, 1.0);
    *percent = static_cast<unsigned int>(std::lround(30 + 70 * x));
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                             nvmlUtilization_t* utilization) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuState& s = state_of(i);
    utilization->gpu = static_cast<unsigned int>(std::lround(100 * average_busy(s)));
    utilization->memory = static_cast<unsigned int>(std::lround(100 * average_dram(s)));
    return NVML_SUCCESS;
  });
}
