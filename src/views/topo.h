// `gpuclk topo`: the GPU-GPU connection matrix with each GPU's CPU and NUMA affinity (as
// nvidia-smi topo -m), and the NVLink lines.
#pragma once

#include <string>
#include <vector>

#include "gpu/device.h"
#include "host/cpu.h"
#include "output/value.h"

namespace gpuclk::views {

// The table over `devices` (the legend is printed apart). The matrix depends on which GPUs it
// spans: NVLinks to GPUs outside it count as switch links.
output::Table topo_table(const std::vector<gpu::Device*>& devices, const host::CpuInfo& cpu);
// "GPU0 <-> GPU1: 18 links x 26.562 GB/s = 478 GB/s (NVLink 4.0)", then the links down.
std::vector<std::string> nvlink_lines(const std::vector<gpu::Device*>& devices);

// Each GPU's NVLinks as columns beside topo's table in CSV and JSON (`gpuclk topo --format json`),
// one row per device in order: links up, the links down (a list), bandwidth of the links up per
// direction, NVLink version. N/A on a GPU without NVLink.
output::Table nvlink_table(const std::vector<gpu::Device*>& devices);

}  // namespace gpuclk::views
