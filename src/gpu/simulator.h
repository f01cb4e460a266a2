// What gpuclk's simulator (libnvml-sim.so) tells about itself beyond NVML, for the layers above
// src/gpu/ (which never see src/nvml/). On a real driver every answer is "none".
#pragma once

#include <optional>
#include <string>

#include "gpu/reading.h"
#include "gpu/units.h"

namespace gpuclk::nvml {
class Api;
}

namespace gpuclk::gpu {

class Device;

// The simulator's state file (settings and physics shared across processes); "" on a real driver.
std::string simulator_state_path(const nvml::Api& api);

// The simulated GPU's exact energy since power-on — the truth NVML's energy counter approximates;
// not_supported on a real driver.
Reading<units::Joules> simulator_energy(const Device& device);

// Who process `pid` works for, when the simulator invented it (a scenario's process):
// "slurm:1234", "pod:UID", "container:ID", "session:N" or "process:PID" (host/owner.h's keys).
// nullopt on a real driver, or for a pid that is a process of this host (a job's).
std::optional<std::string> simulator_process_owner(const nvml::Api& api, unsigned pid);

// What the simulated node's time does, when it is not real time: "time frozen at 45 s
// (GPUCLK_SIM_SPEED=0 ...)" or "time runs 20x (...)", naming the state file that keeps the speed
// for every later command; "" at speed 1 and on a real driver.
std::string simulator_time_note(const nvml::Api& api);

// The simulated node's host: its logical CPUs (split evenly over its NUMA nodes, as the
// simulated GPUs' CPU affinity is) and NUMA nodes, from the scenario; nullopt on a real driver or
// when the scenario gives no CPUs.
struct SimulatedHost {
  unsigned cpus = 0;
  unsigned numa_nodes = 1;
};
std::optional<SimulatedHost> simulator_host(const nvml::Api& api);

// The NVML library file the loader actually opened.
// Whether the library loaded is gpuclk's simulator.
bool simulated(const nvml::Api& api);
const std::string& nvml_library_path(const nvml::Api& api);

}  // namespace gpuclk::gpu
