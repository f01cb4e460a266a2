#include "nvlink.h"

#include <algorithm>
#include <cmath>

#include "node_model.h"

namespace gpuclk::sim {
namespace {

std::uint32_t up_links(const GpuConfig& config) {
  std::uint32_t n = 0;
  for (std::uint32_t k = 0; k < config.nvlink.links; ++k) n += config.nvlink.up(k) ? 1 : 0;
  return n;
}

bool leads_to(const GpuConfig& config, std::uint32_t peer) {
  const GpuNvLink& l = config.nvlink;
  if (peer == config.index || l.links == 0) return false;
  switch (l.topology) {
    case NvLinkTopology::pairs:
      return l.partner >= 0 && static_cast<std::uint32_t>(l.partner) == peer;
    case NvLinkTopology::nvswitch:
      return true;
    case NvLinkTopology::none:
      break;
  }
  return false;
}

}  // namespace

double default_nvlink_gigabytes_per_s(std::uint32_t generation) {
  switch (generation) {
    case 2:
      return 25.781;
    case 3:
      return 25.0;
    case 4:
      return 26.562;
    default:
      return 0;
  }
}

std::uint32_t nvlink_links_to(const GpuConfig& config, std::uint32_t peer) {
  return leads_to(config, peer) ? up_links(config) : 0;
}

double p2p_bandwidth(const GpuConfig& config, std::uint32_t peer, double pcie_bytes_per_s) {
  const std::uint32_t links = nvlink_links_to(config, peer);
  if (links == 0) return pcie_bytes_per_s;
  return links * config.nvlink.gigabytes_per_s_per_link * 1e9;
}

void record_p2p(const GpuConfig& config, GpuDynamics& d, std::uint32_t peer, double bytes) {
  if (bytes <= 0) return;
  if (peer < kMaxNvLinkPeers) d.nvlink_sent_to[peer] += bytes;
  const std::uint32_t links = nvlink_links_to(config, peer);
  if (links == 0) return;  // went over PCIe
  for (std::uint32_t k = 0; k < config.nvlink.links; ++k) {
    if (config.nvlink.up(k)) d.nvlink_tx_bytes[k] += bytes / links;
  }
}

std::uint64_t nvlink_error_count(const GpuConfig& config, std::uint32_t link, NvLinkCounter counter,
                                 double now_s) {
  double n = 0;
  for (const NvLinkErrorFault& e : config.nvlink.errors) {
    if (e.link != link || e.counter != counter) continue;
    n += e.initial + e.per_hour * std::max(0.0, now_s - e.from_s) / 3600.0;
  }
  return static_cast<std::uint64_t>(std::floor(n + 1e-9));
}

double nvlink_tx_bytes(const NodeModel& node, std::size_t gpu, std::uint32_t link) {
  if (link >= kMaxNvLinks) return 0;
  return node.gpu(gpu).dynamics.nvlink_tx_bytes[link];
}

double nvlink_rx_bytes(const NodeModel& node, std::size_t gpu, std::uint32_t link) {
  const GpuConfig& config = node.config(gpu);
  const GpuNvLink& l = config.nvlink;
  if (link >= l.links || link >= kMaxNvLinks) return 0;
  if (l.topology == NvLinkTopology::pairs) {
    if (l.partner < 0 || static_cast<std::size_t>(l.partner) >= node.gpu_count()) return 0;
    return node.gpu(static_cast<std::size_t>(l.partner)).dynamics.nvlink_tx_bytes[link];
  }
  if (l.topology != NvLinkTopology::nvswitch || !l.up(link) || gpu >= kMaxNvLinkPeers) return 0;
  double received = 0;
  for (std::size_t i = 0; i < node.gpu_count(); ++i) {
    // Only what went over NVLink: a sender without links used PCIe.
    if (i != gpu && nvlink_links_to(node.config(i), static_cast<std::uint32_t>(gpu)) > 0)
      received += node.gpu(i).dynamics.nvlink_sent_to[gpu];
  }
  return received / std::max<std::uint32_t>(1, up_links(config));
}

}  // namespace gpuclk::sim
