// Power, energy, limits, temperatures, fan and utilization.
#include <cmath>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace gpuclk::sim::abi::get {

nvmlReturn_t power_usage(std::size_t i, unsigned int* milliwatts) {
  // Ampere (but GA100) and later report the 1 s average here; older parts the instant power.
  const GpuState& s = state_of(i);
  *milliwatts = to_mw(spec_of(i).power_average_supported ? average_power_w(s) : s.dynamics.power_w);
  return NVML_SUCCESS;
}

nvmlReturn_t power_management_limit(std::size_t i, unsigned int* milliwatts) {
  *milliwatts = state_of(i).settings.power_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t power_management_limit_constraints(std::size_t i, unsigned int* min_milliwatts,
                                                unsigned int* max_milliwatts) {
  *min_milliwatts = to_mw(spec_of(i).power_limit_min_w);
  *max_milliwatts = to_mw(spec_of(i).power_limit_max_w);
  return NVML_SUCCESS;
}

nvmlReturn_t power_management_default_limit(std::size_t i, unsigned int* milliwatts) {
  *milliwatts = to_mw(spec_of(i).power_limit_default_w);
  return NVML_SUCCESS;
}

nvmlReturn_t enforced_power_limit(std::size_t i, unsigned int* milliwatts) {
  *milliwatts = state_of(i).settings.power_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t total_energy_consumption(std::size_t i, unsigned long long* millijoules) {
  *millijoules = static_cast<unsigned long long>(state_of(i).dynamics.energy_j * 1000.0);
  return NVML_SUCCESS;
}

nvmlReturn_t temperature(std::size_t i, nvmlTemperatureSensors_t sensor, unsigned int* celsius) {
  if (!celsius || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *celsius = static_cast<unsigned int>(std::max(0.0, std::round(state_of(i).dynamics.die_c)));
  return NVML_SUCCESS;
}

nvmlReturn_t temperature_threshold(std::size_t i, nvmlTemperatureThresholds_t threshold,
                                   unsigned int* celsius) {
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
}

nvmlReturn_t fan_speed(std::size_t i, unsigned int* percent) {
  const GpuSpec& spec = spec_of(i);
  if (!spec.has_fan) return NVML_ERROR_NOT_SUPPORTED;
  // A fan curve: 30 % up to 40 °C, 100 % at the GPU max temperature.
  const double t = state_of(i).dynamics.die_c;
  const double x = std::clamp((t - 40.0) / std::max(1.0, spec.gpu_max_c - 40.0), 0.0, 1.0);
  *percent = static_cast<unsigned int>(std::lround(30 + 70 * x));
  return NVML_SUCCESS;
}

nvmlReturn_t utilization_rates(std::size_t i, nvmlUtilization_t* utilization) {
  const GpuState& s = state_of(i);
  utilization->gpu = static_cast<unsigned int>(std::lround(100 * average_busy(s)));
  utilization->memory = static_cast<unsigned int>(std::lround(100 * average_dram(s)));
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get
