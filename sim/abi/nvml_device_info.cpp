// What a GPU is: names, ids, PCI, architecture, memory, topology, NVLink, ECC, modes, processes.
#include <cstdio>
#include <string>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"
#include "nvlink.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

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

// NvLink exists where the scenario wires the GPUs (NVSwitches on an HGX board, or pairs); a PCIe
// card, like the calibration card in its virtual machine, answers NOT_SUPPORTED. A link past the
// GPU's count is INVALID_ARGUMENT.
nvmlReturn_t check_link(std::size_t i, unsigned int link) {
  const unsigned links = config_of(i).nvlink.links;
  if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
  return link < links ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

}  // namespace

nvmlGpuTopologyLevel_t gpuclk::sim::abi::topology_level(std::size_t a, std::size_t b) {
  const GpuConfig& x = config_of(a);
  const GpuConfig& y = config_of(b);
  if (a == b) return NVML_TOPOLOGY_INTERNAL;
  if (x.pcie_switch == y.pcie_switch) return NVML_TOPOLOGY_SINGLE;
  if (x.numa_node == y.numa_node) return NVML_TOPOLOGY_NODE;
  return NVML_TOPOLOGY_SYSTEM;
}

namespace gpuclk::sim::abi::get {

nvmlReturn_t name(std::size_t i, std::string& text) {
  text = config_of(i).spec->name;
  return NVML_SUCCESS;
}

nvmlReturn_t uuid(std::size_t i, std::string& text) {
  text = config_of(i).uuid;
  return NVML_SUCCESS;
}

nvmlReturn_t serial(std::size_t i, std::string& text) {
  text = config_of(i).serial;
  return NVML_SUCCESS;
}

nvmlReturn_t index(std::size_t i, unsigned int* index) {
  *index = config_of(i).index;
  return NVML_SUCCESS;
}

nvmlReturn_t pci_info(std::size_t i, nvmlPciInfo_t* pci) {
  const GpuConfig& c = config_of(i);
  fill_pci(pci, c.pci_domain, c.pci_bus, c.pci_device, c.spec->pci_device_id,
           c.spec->pci_subsystem_id);
  return NVML_SUCCESS;
}

nvmlReturn_t architecture(std::size_t i, nvmlDeviceArchitecture_t* arch) {
  *arch = static_cast<nvmlDeviceArchitecture_t>(config_of(i).spec->architecture);
  return NVML_SUCCESS;
}

nvmlReturn_t cuda_compute_capability(std::size_t i, int* major, int* minor) {
  *major = config_of(i).spec->compute_capability_major;
  *minor = config_of(i).spec->compute_capability_minor;
  return NVML_SUCCESS;
}

nvmlReturn_t num_gpu_cores(std::size_t i, unsigned int* cores) {
  *cores = config_of(i).spec->cuda_cores;
  return NVML_SUCCESS;
}

nvmlReturn_t memory_bus_width(std::size_t i, unsigned int* bits) {
  *bits = config_of(i).spec->memory_bus_width_bits;
  return NVML_SUCCESS;
}

nvmlReturn_t memory_info(std::size_t i, nvmlMemory_t* memory) {
  const GpuConfig& c = config_of(i);
  unsigned long long used = c.spec->memory_reserved_bytes;
  if (state_of(i).dynamics.context_active) used += context_process(c, state_of(i)).memory_bytes;
  used = std::min<unsigned long long>(used, c.spec->memory_total_bytes);
  memory->total = c.spec->memory_total_bytes;
  memory->used = used;
  memory->free = memory->total - used;
  return NVML_SUCCESS;
}

nvmlReturn_t persistence_mode(std::size_t i, nvmlEnableState_t* mode) {
  *mode = state_of(i).settings.persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t compute_mode(std::size_t, nvmlComputeMode_t* mode) {
  *mode = NVML_COMPUTEMODE_DEFAULT;
  return NVML_SUCCESS;
}

nvmlReturn_t ecc_mode(std::size_t i, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  if (!config_of(i).spec->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t total_ecc_errors(std::size_t i, nvmlMemoryErrorType_t type,
                              nvmlEccCounterType_t counter, unsigned long long* count) {
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
}

nvmlReturn_t curr_pcie_link_generation(std::size_t i, unsigned int* gen) {
  *gen = config_of(i).pcie_generation;
  return NVML_SUCCESS;
}

nvmlReturn_t max_pcie_link_generation(std::size_t i, unsigned int* gen) {
  *gen = std::min(config_of(i).spec->pcie_max_generation, config_of(i).pcie_slot_max_generation);
  return NVML_SUCCESS;
}

nvmlReturn_t gpu_max_pcie_link_generation(std::size_t i, unsigned int* gen) {
  *gen = config_of(i).spec->pcie_max_generation;
  return NVML_SUCCESS;
}

nvmlReturn_t curr_pcie_link_width(std::size_t i, unsigned int* width) {
  *width = config_of(i).pcie_width;
  return NVML_SUCCESS;
}

nvmlReturn_t max_pcie_link_width(std::size_t i, unsigned int* width) {
  *width = config_of(i).spec->pcie_max_width;
  return NVML_SUCCESS;
}

nvmlReturn_t pcie_throughput(std::size_t i, nvmlPcieUtilCounter_t counter,
                             unsigned int* kilobytes_per_second) {
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
}

}  // namespace gpuclk::sim::abi::get

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1,
                                                                   nvmlDevice_t device2,
                                                                   nvmlGpuTopologyLevel_t* level) {
  return with_gpu(device1, __func__, Access::identity, [&](std::size_t i) {
    const std::optional<std::size_t> j = index_of(device2);
    if (!j || !level) return NVML_ERROR_INVALID_ARGUMENT;
    if (Context::get().model().gpu(*j).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
    *level = topology_level(i, *j);
    return NVML_SUCCESS;
  });
}

namespace gpuclk::sim::abi::get {

nvmlReturn_t nvlink_state(std::size_t i, unsigned int link, nvmlEnableState_t* active) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  *active = config_of(i).nvlink.up(link) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvlink_remote_pci_info(std::size_t i, unsigned int link, nvmlPciInfo_t* pci) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  const GpuNvLink& l = config_of(i).nvlink;
  if (l.topology == NvLinkTopology::pairs) {  // the partner GPU, on every link
    const GpuConfig& peer = config_of(static_cast<std::size_t>(l.partner));
    fill_pci(pci, peer.pci_domain, peer.pci_bus, peer.pci_device, peer.spec->pci_device_id,
             peer.spec->pci_subsystem_id);
    return NVML_SUCCESS;
  }
  // An HGX board's four NVSwitches (device 0x22A3), links spread round-robin over them.
  static constexpr unsigned kSwitchBus[] = {0x05, 0x06, 0x07, 0x08};
  fill_pci(pci, 0, kSwitchBus[link % 4], 0, 0x22A310DE, 0x16C110DE);
  return NVML_SUCCESS;
}

nvmlReturn_t nvlink_version(std::size_t i, unsigned int link, unsigned int* version) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  switch (config_of(i).spec->nvlink_generation) {
    case 3:
      *version = NVML_NVLINK_VERSION_3_0;
      return NVML_SUCCESS;
    case 4:
      *version = NVML_NVLINK_VERSION_4_0;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_NOT_SUPPORTED;  // a model file that names no generation
  }
}

nvmlReturn_t nvlink_capability(std::size_t i, unsigned int link, nvmlNvLinkCapability_t capability,
                               unsigned int* result) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  switch (capability) {
    case NVML_NVLINK_CAP_P2P_SUPPORTED:
    case NVML_NVLINK_CAP_P2P_ATOMICS:
    case NVML_NVLINK_CAP_VALID:
      *result = 1;  // GPU to GPU through the switches
      return NVML_SUCCESS;
    case NVML_NVLINK_CAP_SYSMEM_ACCESS:
    case NVML_NVLINK_CAP_SYSMEM_ATOMICS:
    case NVML_NVLINK_CAP_SLI_BRIDGE:
      *result = 0;  // an x86 host reaches system memory over PCIe, not NVLink
      return NVML_SUCCESS;
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvlink_error_counter(std::size_t i, unsigned int link,
                                  nvmlNvLinkErrorCounter_t counter, unsigned long long* value) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  if (counter < 0 || counter > NVML_NVLINK_ERROR_DL_ECC_DATA) return NVML_ERROR_INVALID_ARGUMENT;
  // The scenario's nvlink_errors (0 on a clean link); the enum is NvLinkCounter's order.
  *value = nvlink_error_count(config_of(i), link, static_cast<NvLinkCounter>(counter),
                              Context::get().model().now_s());
  return NVML_SUCCESS;
}

nvmlReturn_t nvlink_remote_device_type(std::size_t i, unsigned int link,
                                       nvmlIntNvLinkDeviceType_t* type) {
  if (const nvmlReturn_t status = check_link(i, link); status != NVML_SUCCESS) return status;
  *type = config_of(i).nvlink.topology == NvLinkTopology::pairs ? NVML_NVLINK_DEVICE_TYPE_GPU
                                                                : NVML_NVLINK_DEVICE_TYPE_SWITCH;
  return NVML_SUCCESS;
}

nvmlReturn_t cpu_affinity(std::size_t i, unsigned int cpu_set_size, unsigned long* cpu_set) {
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
}

nvmlReturn_t numa_node_id(std::size_t i, unsigned int* node) {
  *node = config_of(i).numa_node;
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get
