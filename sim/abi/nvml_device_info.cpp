// What a GPU is: names, ids, PCI, architecture, memory, topology, NVLink, ECC, modes, processes.
#include <cstdio>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

const GpuConfig& config_of(std::size_t i) { return Context::get().model().config(i); }
const GpuState& state_of(std::size_t i) { return Context::get().model().gpu(i); }

// The process holding GPU i's context: an injected job's (2 GiB, an assumption: a GEMM's three
// 8192² matrices or a copy's two 1 GiB buffers fit), else the scenario workload's.
Process process_on(std::size_t i) {
  const InjectedJob& job = state_of(i).dynamics.job;
  if (job.running) return {job.pid, "gpuclk sim-job", 2ull << 30};
  return config_of(i).workload.process;
}

void fill_pci(nvmlPciInfo_t* pci, unsigned domain, unsigned bus, unsigned device,
              unsigned device_id, unsigned subsystem_id) {
  std::memset(pci, 0, sizeof *pci);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = device_id;
  pci->pciSubSystemId = subsystem_id;
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain, bus, device);
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, device);
}

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                 unsigned int length) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    return copy_string(config_of(i).spec->name, name, length);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                 unsigned int length) {
  return with_gpu(device, __func__, Access::identity,
                  [&](std::size_t i) { return copy_string(config_of(i).uuid, uuid, length); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial,
                                                   unsigned int length) {
  return with_gpu(device, __func__, Access::identity,
                  [&](std::size_t i) { return copy_string(config_of(i).serial, serial, length); });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!index) return NVML_ERROR_INVALID_ARGUMENT;
    *index = config_of(i).index;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuConfig& c = config_of(i);
    fill_pci(pci, c.pci_domain, c.pci_bus, c.pci_device, c.spec->pci_device_id,
             c.spec->pci_subsystem_id);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                         nvmlDeviceArchitecture_t* arch) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!arch) return NVML_ERROR_INVALID_ARGUMENT;
    *arch = static_cast<nvmlDeviceArchitecture_t>(config_of(i).spec->architecture);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                                  int* minor) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = config_of(i).spec->compute_capability_major;
    *minor = config_of(i).spec->compute_capability_minor;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* cores) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!cores) return NVML_ERROR_INVALID_ARGUMENT;
    *cores = config_of(i).spec->cuda_cores;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device,
                                                           unsigned int* bits) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!bits) return NVML_ERROR_INVALID_ARGUMENT;
    *bits = config_of(i).spec->memory_bus_width_bits;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuConfig& c = config_of(i);
    unsigned long long used = c.spec->memory_reserved_bytes;
    if (state_of(i).dynamics.context_active) used += process_on(i).memory_bytes;
    used = std::min<unsigned long long>(used, c.spec->memory_total_bytes);
    memory->total = c.spec->memory_total_bytes;
    memory->used = used;
    memory->free = memory->total - used;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
                                                            nvmlEnableState_t* mode) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = state_of(i).settings.persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device,
                                                        nvmlComputeMode_t* mode) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t) {
    if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_COMPUTEMODE_DEFAULT;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
                                                    nvmlEnableState_t* pending) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
    if (!config_of(i).spec->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                           nvmlMemoryErrorType_t type,
                                                           nvmlEccCounterType_t counter,
                                                           unsigned long long* count) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (!config_of(i).spec->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    const GpuDynamics& d = state_of(i).dynamics;
    const bool volatile_counter = counter == NVML_VOLATILE_ECC;
    if (counter != NVML_VOLATILE_ECC && counter != NVML_AGGREGATE_ECC)
      return NVML_ERROR_INVALID_ARGUMENT;
    if (type == NVML_MEMORY_ERROR_TYPE_CORRECTED) {
      *count = volatile_counter ? d.ecc_corrected_volatile : d.ecc_corrected_aggregate;
    } else if (type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
      *count = volatile_counter ? d.ecc_uncorrected_volatile : d.ecc_uncorrected_aggregate;
    } else {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device,
                                                                   unsigned int* gen) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!gen) return NVML_ERROR_INVALID_ARGUMENT;
    *gen = config_of(i).pcie_generation;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device,
                                                                  unsigned int* gen) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!gen) return NVML_ERROR_INVALID_ARGUMENT;
    *gen = std::min(config_of(i).spec->pcie_max_generation, config_of(i).pcie_slot_max_generation);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                                     unsigned int* gen) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!gen) return NVML_ERROR_INVALID_ARGUMENT;
    *gen = config_of(i).spec->pcie_max_generation;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device,
                                                              unsigned int* width) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!width) return NVML_ERROR_INVALID_ARGUMENT;
    *width = config_of(i).pcie_width;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device,
                                                             unsigned int* width) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!width) return NVML_ERROR_INVALID_ARGUMENT;
    *width = config_of(i).spec->pcie_max_width;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                           nvmlPcieUtilCounter_t counter,
                                                           unsigned int* kilobytes_per_second) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!kilobytes_per_second) return NVML_ERROR_INVALID_ARGUMENT;
    const TickActivity& a = state_of(i).dynamics.last;
    double bytes_per_s = 0;
    if (counter == NVML_PCIE_UTIL_TX_BYTES) {
      bytes_per_s = a.pcie_tx_bytes_per_s;
    } else if (counter == NVML_PCIE_UTIL_RX_BYTES) {
      bytes_per_s = a.pcie_rx_bytes_per_s;
    } else {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    *kilobytes_per_second = static_cast<unsigned int>(bytes_per_s / 1000.0);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1,
                                                                   nvmlDevice_t device2,
                                                                   nvmlGpuTopologyLevel_t* level) {
  return with_gpu(device1, __func__, Access::identity, [&](std::size_t i) {
    const std::optional<std::size_t> j = index_of(device2);
    if (!j || !level) return NVML_ERROR_INVALID_ARGUMENT;
    if (Context::get().model().gpu(*j).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
    const GpuConfig& a = config_of(i);
    const GpuConfig& b = config_of(*j);
    if (i == *j) {
      *level = NVML_TOPOLOGY_INTERNAL;
    } else if (a.pcie_switch == b.pcie_switch) {
      *level = NVML_TOPOLOGY_SINGLE;
    } else if (a.numa_node == b.numa_node) {
      *level = NVML_TOPOLOGY_NODE;
    } else {
      *level = NVML_TOPOLOGY_SYSTEM;
    }
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                        nvmlEnableState_t* active) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!active) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned links = Context::get().scenario().nvswitch ? config_of(i).spec->nvlink_count : 0;
    if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= links) return NVML_ERROR_INVALID_ARGUMENT;
    *active = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
                                                                   unsigned int link,
                                                                   nvmlPciInfo_t* pci) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned links = Context::get().scenario().nvswitch ? config_of(i).spec->nvlink_count : 0;
    if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= links) return NVML_ERROR_INVALID_ARGUMENT;
    // An HGX board's four NVSwitches (device 0x22A3), links spread round-robin over them.
    static constexpr unsigned kSwitchBus[] = {0x05, 0x06, 0x07, 0x08};
    fill_pci(pci, 0, kSwitchBus[link % 4], 0, 0x22A310DE, 0x16C110DE);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device,
                                                        unsigned int cpu_set_size,
                                                        unsigned long* cpu_set) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!cpu_set || cpu_set_size == 0) return NVML_ERROR_INVALID_ARGUMENT;
    const Scenario& s = Context::get().scenario();
    const unsigned per_node = std::max(1u, s.cpu_count / s.numa_nodes);
    const unsigned first = config_of(i).numa_node * per_node;
    constexpr unsigned kBits = sizeof(unsigned long) * 8;
    for (unsigned w = 0; w < cpu_set_size; ++w) cpu_set[w] = 0;
    for (unsigned cpu = first; cpu < first + per_node && cpu < cpu_set_size * kBits; ++cpu) {
      cpu_set[cpu / kBits] |= 1UL << (cpu % kBits);
    }
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int* node) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!node) return NVML_ERROR_INVALID_ARGUMENT;
    *node = config_of(i).numa_node;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                       unsigned int* count,
                                                                       nvmlProcessInfo_t* infos) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    std::vector<nvmlProcessInfo_t> processes;
    if (state_of(i).dynamics.context_active) {
      const Process p = process_on(i);
      processes.push_back(
          {p.pid, p.memory_bytes, 0xFFFFFFFFu, 0xFFFFFFFFu});  // no MIG: ids invalid
    }
    if (*count < processes.size() || (!infos && !processes.empty())) {
      *count = static_cast<unsigned int>(processes.size());
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (std::size_t k = 0; k < processes.size(); ++k) infos[k] = processes[k];
    *count = static_cast<unsigned int>(processes.size());
    return NVML_SUCCESS;
  });
}
