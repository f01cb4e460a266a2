#include "gpu/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpu/device.h"
#include "nvml/api.h"
#include "nvml/sim_abi.h"

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

std::string simulator_time_note(const nvml::Api& api) {
  if (!api.simulated()) return {};
  const double speed = api.time_scale();
  if (speed == 1) return {};
  const auto time_of =
      reinterpret_cast<decltype(&gpuclk_sim_time)>(api.simulator_symbol("gpuclk_sim_time"));
  const double now = time_of ? time_of() : std::nan("");
  const std::string state = api.simulator_state_path();
  const std::string kept = state.empty() ? std::string("kept in the state file")
                                         : fmt::format("kept in {} for every later command", state);
  if (speed == 0) {
    return fmt::format("time frozen{} (GPUCLK_SIM_SPEED=0, {}; GPUCLK_SIM_SPEED=1 runs it again)",
                       std::isnan(now) ? std::string() : fmt::format(" at {:.0f} s", now), kept);
  }
  return fmt::format(
      "time runs {:g}x (GPUCLK_SIM_SPEED={:g}, {}; GPUCLK_SIM_SPEED=1 for real time)", speed, speed,
      kept);
}

std::optional<SimulatedHost> simulator_host(const nvml::Api& api) {
  // Optional: an older simulator library does not tell its host.
  const auto host_of =
      reinterpret_cast<decltype(&gpuclk_sim_host)>(api.simulator_symbol("gpuclk_sim_host"));
  if (!host_of) return std::nullopt;
  SimulatedHost h;
  if (host_of(&h.cpus, &h.numa_nodes) != 0 || h.cpus == 0) return std::nullopt;
  h.numa_nodes = std::max(1u, h.numa_nodes);
  return h;
}

const std::string& nvml_library_path(const nvml::Api& api) { return api.path(); }

bool simulated(const nvml::Api& api) { return api.simulated(); }

}  // namespace gpuclk::gpu
