#include "rules/process_owners.h"

#include "gpu/simulator.h"

namespace gpuclk::rules {

std::optional<host::Owner> process_owner(const nvml::Api& api, unsigned pid) {
  // A simulated pid may be a real process of this host too, with nothing to do with the
  // scenario: the simulator's answer wins.
  if (auto key = gpu::simulator_process_owner(api, pid)) return host::parse_owner_key(*key);
  return host::owner_of(pid);
}

void add_process_owners(Input& input, const nvml::Api& api) {
  for (const auto& w : input.gpus) {
    if (!w.facts.processes) continue;
    for (auto pid : *w.facts.processes) {
      if (input.process_owners.contains(pid)) continue;
      if (auto owner = process_owner(api, pid))
        input.process_owners.emplace(pid, std::move(*owner));
    }
  }
}

}  // namespace gpuclk::rules
