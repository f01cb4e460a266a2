// What NVML says about the selected GPUs' links, in the shape bench p2p and bench nccl price
// their figures with (p2p_report.h): PCIe now and at most, NVLinks up and down, links to the
// NVSwitch fabric, the host NUMA node each GPU hangs off (sysfs), and the NVLinks between pairs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/p2p_report.h"
#include "gpu/device.h"
#include "gpu/topology.h"

namespace gpuclk::bench::p2p {

// The host NUMA node of a PCI device from sysfs (NVML's bus id "00000000:19:00.0"); nullopt
// where the kernel says none (-1) or the device is not there.
std::optional<int> pci_numa_node(const std::string& nvml_bus_id);

// Each device's links; `cuda_ordinals[i]` is devices[i]'s CUDA ordinal. Reads NVML (PCIe link,
// its maximum, the NVLinks' facts) and sysfs.
std::vector<GpuLinks> link_facts(const std::vector<gpu::Device*>& devices,
                                 const std::vector<int>& cuda_ordinals,
                                 const gpu::NvLinkSummary& nvlinks);

// The NVLinks up directly between GPUs a and b (NVML indexes), nullopt when none.
std::optional<PairLinks> direct_links(const gpu::NvLinkSummary& nvlinks, unsigned a, unsigned b);

}  // namespace gpuclk::bench::p2p
