// Who the processes on the GPUs work for (Input::process_owners), read where they live: the
// simulator's scenario for the processes it invents, /proc for the host's (host::owner_of).
#pragma once

#include <optional>
#include <vector>

#include "host/owner.h"
#include "rules/input.h"

namespace gpuclk::nvml {
class Api;
}

namespace gpuclk::rules {

// The owner of `pid`: the simulator's answer when `api` is the simulator and invented the pid,
// else host::owner_of (nullopt: the process is gone, or in another PID namespace).
std::optional<host::Owner> process_owner(const nvml::Api& api, unsigned pid);

// Fills input.process_owners for every pid in the GPUs' facts.processes not there yet.
void add_process_owners(Input& input, const nvml::Api& api);

}  // namespace gpuclk::rules
