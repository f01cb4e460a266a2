// `gpuclk info`'s trees: the host (CPU, NUMA nodes, driver, NVML) and each GPU's inventory
// (architecture, SMs, memory, max clocks, peak FLOP/s per data type, PCIe, NVLink, affinity).
#pragma once

#include <string>

#include "gpu/device.h"
#include "host/cpu.h"
#include "output/value.h"

namespace gpuclk::views {

// The host section: `cpu` and the node's driver, NVML library and GPU count from `set`.
output::Node info_host_tree(const gpu::DeviceSet& set, const host::CpuInfo& cpu);
// One GPU's block; its affinity's NUMA nodes are looked up in `cpu`.
output::Node info_gpu_tree(const gpu::Device& d, const host::CpuInfo& cpu);
// The node's CPUs and NUMA nodes for info and topo: on a simulated node the scenario's (`scenario`
// names it; its GPUs' CPU affinity is the scenario's too), else this machine's (hwloc).
host::CpuInfo node_cpu_info(const gpu::DeviceSet& set, const std::string& scenario);

}  // namespace gpuclk::views
