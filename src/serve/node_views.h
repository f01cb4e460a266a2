// The views the service keeps for the read commands (query, clocks, info, topo, top): src/views'
// trees and documents, as the protocol sends them. The service reads each only while it is in
// demand (service.h).
#pragma once

#include <string>
#include <vector>

#include "serve/service.h"

namespace gpuclk::serve {

// `scenario`: the simulated node's scenario (info's and topo's CPUs are the scenario's), empty on
// real GPUs. The host's CPUs and NUMA nodes are read here, once: they do not change while the
// service runs.
std::vector<View> node_views(const gpu::DeviceSet& devices, const std::string& scenario);

// The clocks view's row of one GPU: the tree, the GPU's name and its settings (compared across
// GPUs by the command).
json clocks_view_row(const gpu::Device& d);

}  // namespace gpuclk::serve
