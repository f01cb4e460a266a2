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
  const auto& links = d.nvlinks().links;
  if (!links) return peers;
  for (const auto& l : *links) {
    if (l.active && l.remote_bus_id) peers[*l.remote_bus_id]++;
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

NvLinkSummary nvlink_summary(const std::vector<Device*>& devices) {
  NvLinkSummary out;
  std::map<std::string, unsigned> index_of_bus;
  for (const auto* d : devices) {
    if (!d->bus_id().empty()) index_of_bus[normalize_bus_id(d->bus_id())] = d->index();
  }
  std::vector<NvLinkPair> to_switch;
  for (const auto* d : devices) {
    const auto& facts = d->nvlinks().links;
    if (!facts || facts->empty()) continue;
    const auto counters = d->nvlink_counters(NvLinkRead::state);
    // Up now by the counters' read (a link can drop after the probe); else as probed.
    std::map<std::optional<unsigned>, NvLinkPair> by_peer;
    NvLinksDown down{d->index(), {}, static_cast<unsigned>(facts->size())};
    for (std::size_t k = 0; k < facts->size(); ++k) {
      const auto& f = (*facts)[k];
      const bool up = k < counters.size() && counters[k].active ? *counters[k].active : f.active;
      if (!up) {
        down.links.push_back(f.link);
        continue;
      }
      std::optional<unsigned> peer;
      if (f.remote_bus_id) {
        auto it = index_of_bus.find(*f.remote_bus_id);
        if (it != index_of_bus.end()) peer = it->second;
      }
      if (peer && *peer < d->index()) continue;  // counted from the lower index's side
      auto& p = by_peer[peer];
      p.gpu = d->index();
      p.peer = peer;
      ++p.links;
      if (f.gigabytes_per_s) p.gigabytes_per_s_per_link = *f.gigabytes_per_s;
      if (f.version) p.version = *f.version;
    }
    for (auto& [peer, p] : by_peer) (peer ? out.pairs : to_switch).push_back(p);
    if (!down.links.empty()) out.down.push_back(std::move(down));
  }
  out.pairs.insert(out.pairs.end(), to_switch.begin(), to_switch.end());
  return out;
}

}  // namespace gpuclk::gpu
