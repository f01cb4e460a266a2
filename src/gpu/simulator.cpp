#include "gpu/simulator.h"

#include <cmath>

#include "gpu/device.h"
#include "nvml/api.h"

namespace gpuclk::gpu {

std::string simulator_state_path(const nvml::Api& api) { return api.simulator_state_path(); }

Reading<units::Joules> simulator_energy(const Device& device) {
  const double joules = device.api().simulator_energy_joules(device.index());
  if (std::isnan(joules)) return Reading<units::Joules>::not_supported();
  return units::Joules{joules};
}

const std::string& nvml_library_path(const nvml::Api& api) { return api.path(); }

}  // namespace gpuclk::gpu
