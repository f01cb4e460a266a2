#include "bench/p2p_measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/p2p_links.h"
#include "gpu/selection.h"
#include "util/error.h"

namespace gpuclk::bench::p2p {

Options measure_options(double mib, int copies, int samples, bool check) {
  if (!(mib >= 1) || !std::isfinite(mib) || mib > 65536) {
    throw bad_argument(fmt::format("--mib {} is outside 1..65536", mib));
  }
  Options m;
  m.bytes = std::size_t(mib * 1024 * 1024) / 16 * 16;
  m.copies_per_sample = copies;
  m.samples = samples;
  m.verify = check;
  validate(m);
  return m;
}

void measure_hosts(const std::string& numa, const Options& m,
                   const std::vector<gpu::Device*>& devices, P2pReport& report) {
  const std::vector<int> nodes = numa_nodes();
  report.host_numa_nodes = nodes.size();
  std::vector<int> extra;
  if (!numa.empty()) {
    const NumaRequest request = parse_numa_request(numa);
    extra = request.all ? nodes : request.nodes;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    GpuLinks& g = report.gpus[i];
    // Where the GPU hangs off, when this host has NUMA and the build can place memory there.
    std::optional<int> local;
    if (g.numa_node && std::find(nodes.begin(), nodes.end(), *g.numa_node) != nodes.end())
      local = g.numa_node;
    auto read_loaded_link = [&g, device = devices[i]] {
      g.pcie_loaded = device->pcie_link().optional();
    };
    const HostResult own = measure_host(g.cuda_ordinal, local, true, m, read_loaded_link);
    report.hosts.push_back(make_host_report(own, g, nullptr, nodes.size()));
    const std::size_t own_row = report.hosts.size() - 1;
    for (int node : extra) {
      if (local && node == *local) continue;
      const HostResult other = measure_host(g.cuda_ordinal, node, false, m);
      const HostReport local_row = report.hosts[own_row];
      report.hosts.push_back(make_host_report(other, g, &local_row, nodes.size()));
    }
  }
}

void measure_peers(const Options& m, const std::vector<gpu::Device*>& devices,
                   const gpu::NvLinkSummary& nvlinks, P2pReport& report) {
  const auto matrix = gpu::connection_matrix(devices);
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = 0; b < devices.size(); ++b) {
      if (a == b) continue;
      const GpuLinks& ga = report.gpus[a];
      const GpuLinks& gb = report.gpus[b];
      const PeerResult result = measure_peer(ga.cuda_ordinal, gb.cuda_ordinal, m);
      const auto direct = direct_links(nvlinks, ga.index, gb.index);
      report.pairs.push_back(make_pair_report(result, ga, gb, direct ? &*direct : nullptr,
                                              gpu::abbreviation(matrix[a][b])));
    }
  }
}

bool any_bad_data(const P2pReport& report) {
  auto bad = [](const std::vector<FigureReport>& figures) {
    return std::any_of(figures.begin(), figures.end(),
                       [](const auto& f) { return f.verified && !*f.verified; });
  };
  return std::any_of(report.pairs.begin(), report.pairs.end(),
                     [&](const auto& p) { return bad(p.figures); }) ||
         std::any_of(report.hosts.begin(), report.hosts.end(),
                     [&](const auto& h) { return bad(h.figures); });
}

}  // namespace gpuclk::bench::p2p
