// Which CUDA device is which NVML GPU. NVML numbers GPUs in PCI order; CUDA by speed unless
// CUDA_DEVICE_ORDER=PCI_BUS_ID, and only those CUDA_VISIBLE_DEVICES lets it see. So GPUs are
// matched by PCI bus id, else by UUID, never by position.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "bench/workload.h"

namespace gpuclk::bench {

struct NvmlGpu {
  unsigned index = 0;
  std::string name, uuid, pci_bus_id;  // NVML's spellings; bus id may be empty
};

// The CUDA ordinal of each GPU in `gpus`, in order. Throws Error(gpu_not_found) naming the first
// GPU CUDA does not see (with a CUDA_VISIBLE_DEVICES hint).
std::vector<int> cuda_ordinals(std::span<const NvmlGpu> gpus, std::span<const DeviceInfo> cuda);

}  // namespace gpuclk::bench
