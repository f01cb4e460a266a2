#include "gpu/topology.h"

#include <algorithm>
#include <map>

#include "gpu/selection.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

PathKind from_level(nvmlGpuTopologyLevel_t level) {
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL:
      return PathKind::self;
    case NVML_TOPOLOGY_SINGLE:
      return PathKind::pix;
    case NVML_TOPOLOGY_MULTIPLE:
      return PathKind::pxb;
    case NVML_TOPOLOGY_HOSTBRIDGE:
      return PathKind::phb;
    case NVML_TOPOLOGY_NODE:
      return PathKind::node;
    case NVML_TOPOLOGY_SYSTEM:
      return PathKind::sys;
  }
  return PathKind::unknown;
}

// Active NVLinks of a device, by the normalized bus id of what sits at the other end.
std::map<std::string, unsigned> nvlink_peers(const Device& d) {
  std::map<std::string, unsigned> peers;
  const auto& api = d.api();
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    if (nvml::Api::call(api.nvmlDeviceGetNvLinkState, d.handle(), link, &active) != NVML_SUCCESS)
      break;
    if (active != NVML_FEATURE_ENABLED) continue;
    nvmlPciInfo_t remote{};
    if (nvml::Api::call(api.nvmlDeviceGetNvLinkRemotePciInfo_v2, d.handle(), link, &remote) !=
        NVML_SUCCESS)
      continue;
    peers[normalize_bus_id(remote.busId)]++;
  }
  return peers;
}

}  // namespace

std::string abbreviation(const Connection& c) {
  switch (c.kind) {
    case PathKind::self:
      return "X";
    case PathKind::nvlink:
      return "NV" + std::to_string(c.nvlinks);
    case PathKind::pix:
      return "PIX";
    case PathKind::pxb:
      return "PXB";
    case PathKind::phb:
      return "PHB";
    case PathKind::node:
      return "NODE";
    case PathKind::sys:
      return "SYS";
    case PathKind::unknown:
      break;
  }
  return "N/A";
}

const std::vector<std::pair<std::string, std::string>>& topology_legend() {
  static const std::vector<std::pair<std::string, std::string>> legend = {
      {"X", "Self"},
      {"SYS",
       "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., "
       "QPI/UPI)"},
      {"NODE",
       "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a "
       "NUMA node"},
      {"PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"},
      {"PXB",
       "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"},
      {"PIX", "Connection traversing at most a single PCIe bridge"},
      {"NV#", "Connection traversing a bonded set of # NVLinks"},
  };
  return legend;
}

std::vector<std::vector<Connection>> connection_matrix(const std::vector<Device*>& devices) {
  const std::size_t n = devices.size();
  std::vector<std::map<std::string, unsigned>> peers(n);
  std::vector<std::string> bus(n);
  for (std::size_t i = 0; i < n; ++i) {
    peers[i] = nvlink_peers(*devices[i]);
    const auto& pci = devices[i]->identity().pci;
    bus[i] = pci ? normalize_bus_id(pci->bus_id) : "";
  }
  auto switch_links = [&](std::size_t i) {
    unsigned count = 0;
    for (const auto& [remote, links] : peers[i]) {
      if (std::find(bus.begin(), bus.end(), remote) == bus.end()) count += links;
    }
    return count;
  };

  std::vector<std::vector<Connection>> m(n, std::vector<Connection>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        m[i][j] = {PathKind::self, 0};
        continue;
      }
      unsigned direct = peers[i].count(bus[j]) ? peers[i].at(bus[j]) : 0;
      unsigned via_switch = std::min(switch_links(i), switch_links(j));
      if (direct + via_switch > 0) {
        m[i][j] = {PathKind::nvlink, direct + via_switch};
        continue;
      }
      nvmlGpuTopologyLevel_t level{};
      const auto& api = devices[i]->api();
      if (nvml::Api::call(api.nvmlDeviceGetTopologyCommonAncestor, devices[i]->handle(),
                          devices[j]->handle(), &level) == NVML_SUCCESS) {
        m[i][j] = {from_level(level), 0};
      }
    }
  }
  return m;
}

}  // namespace gpuclk::gpu
