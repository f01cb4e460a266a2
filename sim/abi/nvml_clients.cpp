// The rest of what NVML clients (pynvml and the tools on it, nvtop) ask a GPU: board strings,
// modes, the older layouts of versioned calls, process lists and per-process utilization,
// engine statistics, affinity and topology sets. Values an H100 reports where the model has
// nothing to say (smi/smi_q.txt of the calibration card: no display, accounting off, MIG off,
// GSP firmware on, encoder idle).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"
#include "nvlink.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

constexpr unsigned kAccountingBufferSize = 4000;  // what the driver reports with accounting off
constexpr unsigned kMaxMigDevices = 7;            // GA100 and GH100: seven GPU instances
constexpr unsigned kInvalidInstanceId = 0xFFFFFFFFu;

// The processes holding a context on GPU i: the injected jobs', else the scenario's while its
// workload holds one.
std::vector<nvmlProcessInfo_t> processes_of(std::size_t i) {
  std::vector<nvmlProcessInfo_t> processes;
  const GpuDynamics& d = state_of(i).dynamics;
  for (const InjectedJob& job : d.jobs) {
    if (!job.running) continue;
    const Process p = context_process(config_of(i), state_of(i));
    processes.push_back({job.pid, p.memory_bytes, kInvalidInstanceId, kInvalidInstanceId});
  }
  if (processes.empty() && d.context_active) {
    const Process p = context_process(config_of(i), state_of(i));
    processes.push_back({p.pid, p.memory_bytes, kInvalidInstanceId, kInvalidInstanceId});
  }
  return processes;
}

// NVML's (count, array) protocol for process lists: INSUFFICIENT_SIZE with the needed count
// when the array is missing or short.
template <typename Info, typename Convert>
nvmlReturn_t fill_processes(const std::vector<nvmlProcessInfo_t>& processes, unsigned int* count,
                            Info* infos, Convert&& convert) {
  const auto needed = static_cast<unsigned int>(processes.size());
  if (*count < needed || (!infos && needed > 0)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int k = 0; k < needed; ++k) infos[k] = convert(processes[k]);
  *count = needed;
  return NVML_SUCCESS;
}

nvmlProcessInfo_t as_is(const nvmlProcessInfo_t& p) { return p; }
nvmlProcessInfoV1_t as_v1(const nvmlProcessInfo_t& p) { return {p.pid, p.usedGpuMemory}; }

// The "count = 0 asks for the size" protocol of the topology sets (always SUCCESS).
nvmlReturn_t fill_devices(const std::vector<std::size_t>& gpus, unsigned int* count,
                          nvmlDevice_t* devices) {
  const auto found = static_cast<unsigned int>(gpus.size());
  if (*count == 0) {
    *count = found;
    return NVML_SUCCESS;
  }
  if (!devices) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned int n = std::min(*count, found);
  for (unsigned int k = 0; k < n; ++k) devices[k] = handle_of(gpus[k]);
  *count = n;
  return NVML_SUCCESS;
}

// Per lane, MB/s, by PCIe generation (what nvmlDeviceGetPcieSpeed reports).
unsigned pcie_mbps_per_lane(unsigned generation) {
  static constexpr unsigned kSpeed[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
  return generation < std::size(kSpeed) ? kSpeed[generation] : 0;
}

// The CPUs of GPU i's NUMA node as a bit mask of cpu_set_size words (socket = node here).
nvmlReturn_t cpu_mask(std::size_t i, unsigned int words, unsigned long* set) {
  if (words == 0) return NVML_ERROR_INVALID_ARGUMENT;
  return get::cpu_affinity(i, words, set);
}

unsigned long long used_by_processes(std::size_t i) {
  unsigned long long used = 0;
  for (const nvmlProcessInfo_t& p : processes_of(i)) used += p.usedGpuMemory;
  return used;
}

}  // namespace

namespace gpuclk::sim::abi::get {

// --- Identity ---------------------------------------------------------------------------------

nvmlReturn_t minor_number(std::size_t i, unsigned int* minor) {
  *minor = config_of(i).index;  // /dev/nvidiaN in PCI order, as the driver numbers them
  return NVML_SUCCESS;
}

nvmlReturn_t board_id(std::size_t i, unsigned int* board) {
  // The driver derives it from the slot; the calibration card (bus 0x00, device 0x06) reports 0x6.
  const GpuConfig& c = config_of(i);
  *board = (c.pci_domain << 16) | (c.pci_bus << 8) | c.pci_device;
  return NVML_SUCCESS;
}

nvmlReturn_t multi_gpu_board(std::size_t, unsigned int* multi) {
  *multi = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t brand(std::size_t, nvmlBrandType_t* brand) {
  *brand = NVML_BRAND_NVIDIA;  // "Product Brand: NVIDIA" for data-centre parts since R520
  return NVML_SUCCESS;
}

nvmlReturn_t board_part_number(std::size_t i, std::string& text) {
  text = spec_of(i).board_part_number;
  return text.empty() ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

nvmlReturn_t vbios_version(std::size_t i, std::string& text) {
  text = spec_of(i).vbios_version;
  return text.empty() ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

nvmlReturn_t inforom_version(std::size_t i, nvmlInforomObject_t object, std::string& text) {
  switch (object) {
    case NVML_INFOROM_OEM:
      text = spec_of(i).inforom_oem_version;
      break;
    case NVML_INFOROM_ECC:
      text = spec_of(i).inforom_ecc_version;
      break;
    case NVML_INFOROM_POWER:
      return NVML_ERROR_NOT_SUPPORTED;  // "Power Management Object: N/A"
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
  return text.empty() ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

nvmlReturn_t inforom_image_version(std::size_t i, std::string& text) {
  text = spec_of(i).inforom_image_version;
  return text.empty() ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

nvmlReturn_t inforom_checksum(std::size_t i, unsigned int* checksum) {
  // ASSUMPTION: the checksum of the inforom configuration is opaque; an FNV-1a hash of the image
  // version stands in for it (stable per board kind, like the real one).
  unsigned int hash = 2166136261u;
  for (const char ch : spec_of(i).inforom_image_version) {
    hash = (hash ^ static_cast<unsigned char>(ch)) * 16777619u;
  }
  *checksum = hash;
  return NVML_SUCCESS;
}

nvmlReturn_t validate_inforom(std::size_t) { return NVML_SUCCESS; }

nvmlReturn_t pci_info_v1(std::size_t i, nvmlPciInfoV1_t* pci) {
  nvmlPciInfo_t current{};
  const nvmlReturn_t status = pci_info(i, &current);
  if (status != NVML_SUCCESS) return status;
  *pci = {};
  std::memcpy(pci->busId, current.busIdLegacy, sizeof pci->busId);
  pci->domain = current.domain;
  pci->bus = current.bus;
  pci->device = current.device;
  pci->pciDeviceId = current.pciDeviceId;
  pci->pciSubSystemId = current.pciSubSystemId;
  return NVML_SUCCESS;
}

nvmlReturn_t bus_type(std::size_t, nvmlBusType_t* type) {
  *type = NVML_BUS_TYPE_PCIE;
  return NVML_SUCCESS;
}

nvmlReturn_t irq_num(std::size_t i, unsigned int* irq) {
  // ASSUMPTION: MSI vectors the kernel hands out in PCI order; the number itself is arbitrary.
  *irq = 150 + config_of(i).index;
  return NVML_SUCCESS;
}

nvmlReturn_t gsp_firmware_version(std::size_t, char* version) {
  // The GSP firmware ships with the driver and carries its version (smi_q.txt).
  const std::string& driver = Context::get().scenario().driver_version;
  return copy_string(driver, version, NVML_GSP_FIRMWARE_VERSION_BUF_SIZE);
}

nvmlReturn_t gsp_firmware_mode(std::size_t, unsigned int* enabled, unsigned int* default_mode) {
  *enabled = 1;  // Hopper and the open kernel modules run the driver on the GSP
  *default_mode = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t virtualization_mode(std::size_t, nvmlGpuVirtualizationMode_t* mode) {
  *mode = NVML_GPU_VIRTUALIZATION_MODE_NONE;  // the simulated nodes are bare metal
  return NVML_SUCCESS;
}

// --- Modes ------------------------------------------------------------------------------------

nvmlReturn_t display_mode(std::size_t, nvmlEnableState_t*) {
  return NVML_ERROR_DEPRECATED;  // smi_q.txt: "Requested functionality has been deprecated"
}

nvmlReturn_t display_active(std::size_t, nvmlEnableState_t* active) {
  *active = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t accounting_mode(std::size_t, nvmlEnableState_t* mode) {
  *mode = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t accounting_buffer_size(std::size_t, unsigned int* size) {
  *size = kAccountingBufferSize;
  return NVML_SUCCESS;
}

// With accounting off, the driver keeps no per-process records.
nvmlReturn_t accounting_pids(std::size_t, unsigned int*, unsigned int*) {
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t accounting_stats(std::size_t, unsigned int, nvmlAccountingStats_t*) {
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t power_management_mode(std::size_t, nvmlEnableState_t* mode) {
  *mode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t mig_mode(std::size_t i, unsigned int* current, unsigned int* pending) {
  if (!spec_of(i).mig_supported) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = 0;  // NVML_DEVICE_MIG_DISABLE (nvml.json: mig [0, 0])
  return NVML_SUCCESS;
}

nvmlReturn_t max_mig_device_count(std::size_t i, unsigned int* count) {
  *count = spec_of(i).mig_supported ? kMaxMigDevices : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t is_mig_device_handle(std::size_t, unsigned int* is_mig) {
  *is_mig = 0;  // every handle the library gives out is a whole GPU
  return NVML_SUCCESS;
}

// Instance ids exist on MIG device handles only.
nvmlReturn_t gpu_instance_id(std::size_t, unsigned int*) { return NVML_ERROR_NOT_SUPPORTED; }
nvmlReturn_t compute_instance_id(std::size_t, unsigned int*) { return NVML_ERROR_NOT_SUPPORTED; }

// --- Memory, ECC --------------------------------------------------------------------------------

nvmlReturn_t memory_info_v2(std::size_t i, nvmlMemory_v2_t* memory) {
  const GpuSpec& spec = spec_of(i);
  // The v2 layout reports the driver's reservation apart; "used" is what processes hold.
  memory->total = spec.memory_total_bytes;
  memory->reserved = std::min<unsigned long long>(spec.memory_reserved_bytes, memory->total);
  memory->used = std::min(used_by_processes(i), memory->total - memory->reserved);
  memory->free = memory->total - memory->reserved - memory->used;
  return NVML_SUCCESS;
}

nvmlReturn_t default_ecc_mode(std::size_t i, nvmlEnableState_t* mode) {
  if (!spec_of(i).ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  *mode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

// --- Clocks -------------------------------------------------------------------------------------

nvmlReturn_t clock(std::size_t i, nvmlClockType_t type, nvmlClockId_t id, unsigned int* mhz) {
  switch (id) {
    case NVML_CLOCK_ID_CURRENT:
      return clock_info(i, type, mhz);
    case NVML_CLOCK_ID_APP_CLOCK_TARGET:
      return applications_clock(i, type, mhz);
    case NVML_CLOCK_ID_APP_CLOCK_DEFAULT:
      return default_applications_clock(i, type, mhz);
    case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX:
      return max_customer_boost_clock(i, type, mhz);
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t supported_performance_states(std::size_t, nvmlPstates_t* pstates, unsigned int size) {
  // size is in bytes; the model runs in P0 only, the rest of the array reads "unknown".
  const unsigned int slots = size / static_cast<unsigned int>(sizeof(nvmlPstates_t));
  if (slots == 0) return NVML_ERROR_INSUFFICIENT_SIZE;
  pstates[0] = NVML_PSTATE_0;
  for (unsigned int k = 1; k < slots; ++k) pstates[k] = NVML_PSTATE_UNKNOWN;
  return NVML_SUCCESS;
}

nvmlReturn_t gpc_clk_vf_offset(std::size_t, int* offset) {
  *offset = 0;  // the model has no V/F curve offset (nvml.json: gpc_vf_offset 0)
  return NVML_SUCCESS;
}

nvmlReturn_t mem_clk_vf_offset(std::size_t, int* offset) {
  *offset = 0;
  return NVML_SUCCESS;
}

// --- Fans ---------------------------------------------------------------------------------------

nvmlReturn_t fan_speed_v2(std::size_t i, unsigned int fan, unsigned int* percent) {
  if (!spec_of(i).has_fan) return NVML_ERROR_NOT_SUPPORTED;
  if (fan != 0) return NVML_ERROR_INVALID_ARGUMENT;
  return fan_speed(i, percent);
}

nvmlReturn_t num_fans(std::size_t i, unsigned int* count) {
  *count = spec_of(i).has_fan ? 1 : 0;
  return NVML_SUCCESS;
}

// --- Engines and processes ------------------------------------------------------------------

nvmlReturn_t encoder_capacity(std::size_t, nvmlEncoderType_t type, unsigned int* capacity) {
  if (type != NVML_ENCODER_QUERY_H264 && type != NVML_ENCODER_QUERY_HEVC &&
      type != NVML_ENCODER_QUERY_AV1) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *capacity = 0;  // no encoder sessions: nothing of the capacity is used
  return NVML_SUCCESS;
}

nvmlReturn_t encoder_stats(std::size_t, unsigned int* sessions, unsigned int* average_fps,
                           unsigned int* average_latency_us) {
  *sessions = *average_fps = *average_latency_us = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t encoder_sessions(std::size_t, unsigned int* count, nvmlEncoderSessionInfo_t*) {
  *count = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t fbc_stats(std::size_t, nvmlFBCStats_t* stats) {
  *stats = {0, 0, 0};
  return NVML_SUCCESS;
}

nvmlReturn_t fbc_sessions(std::size_t, unsigned int* count, nvmlFBCSessionInfo_t*) {
  *count = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t compute_running_processes(std::size_t i, unsigned int* count,
                                       nvmlProcessInfo_t* infos) {
  return fill_processes(processes_of(i), count, infos, as_is);
}

nvmlReturn_t compute_running_processes_v1(std::size_t i, unsigned int* count,
                                          nvmlProcessInfoV1_t* infos) {
  return fill_processes(processes_of(i), count, infos, as_v1);
}

// The modelled workloads are CUDA compute jobs without MPS: no graphics or MPS clients.
nvmlReturn_t graphics_running_processes(std::size_t, unsigned int* count,
                                        nvmlProcessInfo_t* infos) {
  return fill_processes({}, count, infos, as_is);
}

nvmlReturn_t graphics_running_processes_v1(std::size_t, unsigned int* count,
                                           nvmlProcessInfoV1_t* infos) {
  return fill_processes({}, count, infos, as_v1);
}

nvmlReturn_t mps_running_processes(std::size_t, unsigned int* count, nvmlProcessInfo_t* infos) {
  return fill_processes({}, count, infos, as_is);
}

nvmlReturn_t mps_running_processes_v1(std::size_t, unsigned int* count,
                                      nvmlProcessInfoV1_t* infos) {
  return fill_processes({}, count, infos, as_v1);
}

nvmlReturn_t process_utilization(std::size_t i, nvmlProcessUtilizationSample_t* samples,
                                 unsigned int* count, unsigned long long last_seen_us) {
  // Samples newer than last_seen_us: each process (an injected job's, the scenario workload's)
  // has one per 0.25 s it held a context (the share of that period its kernels ran; the last of a
  // job that ended covers its last part-period), the last 8 s, so a reader that comes every few
  // seconds gets every period since it last came, as from the driver's sample buffer.
  Context& c = Context::get();
  const GpuState& s = state_of(i);
  const auto dram = static_cast<unsigned int>(std::lround(100 * average_dram(s)));
  std::vector<nvmlProcessUtilizationSample_t> found;
  const auto add = [&](unsigned pid, const UtilizationSamples& u) {
    for (int k = 0; k < kJobSamples; ++k) {
      const int at = static_cast<int>((u.pos + static_cast<unsigned>(k)) % kJobSamples);
      if (u.end_s[at] <= 0) continue;
      const auto stamp = static_cast<unsigned long long>(c.timestamp_us(u.end_s[at]));
      if (stamp <= last_seen_us) continue;
      const auto sm = static_cast<unsigned int>(std::lround(100 * u.sm[at]));
      found.push_back({pid, stamp, sm, sm > 0 ? dram : 0, 0, 0});
    }
  };
  for (const InjectedJob& job : s.dynamics.jobs) {
    if (job.id != 0) add(job.pid, job.samples);
  }
  if (const unsigned pid = config_of(i).workload.process.pid; pid != 0) {
    add(pid, s.dynamics.workload_samples);
  }
  if (found.empty()) return NVML_ERROR_NOT_FOUND;  // no process ran since last_seen_us
  const auto needed = static_cast<unsigned int>(found.size());
  if (!samples || *count < needed) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int k = 0; k < needed; ++k) samples[k] = found[k];
  *count = needed;
  return NVML_SUCCESS;
}

// --- PCIe, topology, affinity -----------------------------------------------------------------

nvmlReturn_t pcie_speed(std::size_t i, unsigned int* mbps_per_lane) {
  *mbps_per_lane = pcie_mbps_per_lane(config_of(i).pcie_generation);
  return NVML_SUCCESS;
}

nvmlReturn_t pcie_link_max_speed(std::size_t i, unsigned int* speed) {
  // NVML_PCIE_LINK_MAX_SPEED_*: 1 = 2500 MB/s per lane ... 5 = 32000, numbered like generations.
  const GpuConfig& c = config_of(i);
  *speed = std::min(c.spec->pcie_max_generation, c.pcie_slot_max_generation);
  return NVML_SUCCESS;
}

nvmlReturn_t topology_nearest_gpus(std::size_t i, nvmlGpuTopologyLevel_t level, unsigned int* count,
                                   nvmlDevice_t* devices) {
  std::vector<std::size_t> near;
  for (std::size_t j = 0; j < Context::get().model().gpu_count(); ++j) {
    if (j != i && topology_level(i, j) <= level) near.push_back(j);
  }
  return fill_devices(near, count, devices);
}

nvmlReturn_t cpu_affinity_within_scope(std::size_t i, unsigned int cpu_set_size,
                                       unsigned long* cpu_set, nvmlAffinityScope_t scope) {
  if (scope != NVML_AFFINITY_SCOPE_NODE && scope != NVML_AFFINITY_SCOPE_SOCKET) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return cpu_mask(i, cpu_set_size, cpu_set);  // one socket per NUMA node in the model
}

nvmlReturn_t memory_affinity(std::size_t i, unsigned int node_set_size, unsigned long* node_set,
                             nvmlAffinityScope_t scope) {
  if (node_set_size == 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (scope != NVML_AFFINITY_SCOPE_NODE && scope != NVML_AFFINITY_SCOPE_SOCKET) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  constexpr unsigned kBits = sizeof(unsigned long) * 8;
  for (unsigned w = 0; w < node_set_size; ++w) node_set[w] = 0;
  const unsigned node = config_of(i).numa_node;
  if (node < node_set_size * kBits) node_set[node / kBits] |= 1UL << (node % kBits);
  return NVML_SUCCESS;
}

// --- System -----------------------------------------------------------------------------------

nvmlReturn_t process_name(Context& c, unsigned int pid, std::string& text) {
  for (std::size_t i = 0; i < c.model().gpu_count(); ++i) {
    const Process p = context_process(c.model().config(i), c.model().gpu(i));
    if (p.pid == pid && !p.name.empty()) {
      text = p.name;
      return NVML_SUCCESS;
    }
  }
  // Not one of the scenario's: a process of this machine, named as the kernel names it.
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  if (comm && std::getline(comm, text)) return NVML_SUCCESS;
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t hic_version(Context&, unsigned int* count, nvmlHwbcEntry_t*) {
  *count = 0;  // no host interface cards (S-class units only)
  return NVML_SUCCESS;
}

nvmlReturn_t topology_gpu_set(Context& c, unsigned int cpu, unsigned int* count,
                              nvmlDevice_t* devices) {
  const Scenario& s = c.scenario();
  const unsigned per_node = std::max(1u, s.cpu_count / std::max(1u, s.numa_nodes));
  if (s.cpu_count > 0 && cpu >= s.cpu_count) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<std::size_t> gpus;
  for (std::size_t i = 0; i < c.model().gpu_count(); ++i) {
    if (c.model().config(i).numa_node == cpu / per_node) gpus.push_back(i);
  }
  return fill_devices(gpus, count, devices);
}

nvmlReturn_t excluded_device_count(Context&, unsigned int* count) {
  *count = 0;  // the scenario excludes no GPU
  return NVML_SUCCESS;
}

nvmlReturn_t excluded_device_info(Context&, unsigned int, nvmlExcludedDeviceInfo_t*) {
  return NVML_ERROR_INVALID_ARGUMENT;  // no index is valid when none is excluded
}

}  // namespace gpuclk::sim::abi::get

// Two devices: written out, the generator's device entries take one.
GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceOnSameBoard(nvmlDevice_t device1, nvmlDevice_t device2,
                                                     int* same_board) {
  return with_gpu(device1, __func__, Access::identity, [&](std::size_t i) {
    const std::optional<std::size_t> j = index_of(device2);
    if (!j || !same_board) return NVML_ERROR_INVALID_ARGUMENT;
    if (Context::get().model().gpu(*j).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
    *same_board = i == *j ? 1 : 0;  // one GPU per board
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                                      nvmlGpuP2PCapsIndex_t index,
                                                      nvmlGpuP2PStatus_t* status) {
  return with_gpu(device1, __func__, Access::identity, [&](std::size_t i) {
    const std::optional<std::size_t> j = index_of(device2);
    if (!j || !status || index >= NVML_P2P_CAPS_INDEX_UNKNOWN) return NVML_ERROR_INVALID_ARGUMENT;
    if (Context::get().model().gpu(*j).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
    const bool nvlink = nvlink_links_to(config_of(i), static_cast<std::uint32_t>(*j)) > 0;
    // Over NVLink (a switch or a direct link) a pair talks; over PCIe, GPUs behind one switch do
    // (ASSUMPTION: no ACS).
    const bool ok = index == NVML_P2P_CAPS_INDEX_NVLINK
                        ? nvlink
                        : nvlink || topology_level(i, *j) <= NVML_TOPOLOGY_SINGLE;
    *status = ok ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t gpuclk::sim::abi::get::unit_count(Context&, unsigned int* count) {
  *count = 0;  // S-class units: none on the simulated nodes
  return NVML_SUCCESS;
}
