#include "gpu/simulator.h"

#include <cmath>

#include "gpu/device.h"
#include "gpuclk_sim.h"
#include "nvml/api.h"

namespace gpuclk::gpu {

std::string simulator_state_path(const nvml::Api& api) { return api.simulator_state_path(); }

Reading<units::Joules> simulator_energy(const Device& device) {
  const double joules = device.api().simulator_energy_joules(device.index());
  if (std::isnan(joules)) return Reading<units::Joules>::not_supported();
  return units::Joules{joules};
}

std::optional<std::string> simulator_process_owner(const nvml::Api& api, unsigned pid) {
  // Optional: an older simulator library answers for none of its processes.
  const auto owner_of = reinterpret_cast<decltype(&gpuclk_sim_process_owner)>(
      api.simulator_symbol("gpuclk_sim_process_owner"));
  if (!owner_of) return std::nullopt;
  char owner[256] = {};
  if (owner_of(pid, owner, sizeof owner) != NVML_SUCCESS) return std::nullopt;
  return std::string(owner);
}

const std::string& nvml_library_path(const nvml::Api& api) { return api.path(); }

}  // namespace gpuclk::gpu
