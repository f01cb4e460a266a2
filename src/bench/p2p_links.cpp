#include "bench/p2p_links.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace gpuclk::bench::p2p {

std::optional<int> pci_numa_node(const std::string& nvml_bus_id) {
  // NVML: "00000000:19:00.0"; sysfs: "0000:19:00.0", lowercase.
  std::string id = nvml_bus_id.size() == 16 ? nvml_bus_id.substr(4) : nvml_bus_id;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  std::ifstream in("/sys/bus/pci/devices/" + id + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return std::nullopt;
  return node;
}

std::vector<GpuLinks> link_facts(const std::vector<gpu::Device*>& devices,
                                 const std::vector<int>& cuda_ordinals,
                                 const gpu::NvLinkSummary& nvlinks) {
  std::vector<GpuLinks> gpus;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const gpu::Device& d = *devices[i];
    GpuLinks g;
    g.index = d.index();
    g.cuda_ordinal = i < cuda_ordinals.size() ? cuda_ordinals[i] : -1;
    g.name = d.name();
    g.bus_id = d.bus_id();
    g.pcie_idle = d.pcie_link().optional();
    g.pcie_max = d.ratings().pcie_max.optional();
    g.numa_node = pci_numa_node(d.bus_id());
    if (const auto& links = d.nvlinks().links) {
      g.nvlinks = unsigned(links->size());
      for (const auto& l : *links) {
        if (l.gigabytes_per_s) g.nvlink_bytes_per_second_per_link = *l.gigabytes_per_s * 1e9;
      }
    }
    for (const auto& down : nvlinks.down) {
      if (down.gpu == g.index) g.nvlinks_down = unsigned(down.links.size());
    }
    for (const auto& pair : nvlinks.pairs) {
      if (pair.gpu != g.index || pair.peer) continue;
      g.nvswitch_links = pair.links;
      g.nvswitch_bytes_per_second = pair.links * pair.gigabytes_per_s_per_link * 1e9;
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

std::optional<PairLinks> direct_links(const gpu::NvLinkSummary& nvlinks, unsigned a, unsigned b) {
  for (const auto& pair : nvlinks.pairs) {
    if (!pair.peer) continue;
    if ((pair.gpu == a && *pair.peer == b) || (pair.gpu == b && *pair.peer == a)) {
      return PairLinks{a, b, pair.links, pair.gigabytes_per_s_per_link * 1e9};
    }
  }
  return std::nullopt;
}

}  // namespace gpuclk::bench::p2p
