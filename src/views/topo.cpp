#include "views/topo.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu/topology.h"

namespace gpuclk::views {

namespace out = output;

out::Table topo_table(const std::vector<gpu::Device*>& devices, const host::CpuInfo& cpu) {
  auto matrix = gpu::connection_matrix(devices);

  out::Table t;
  t.columns.push_back({"gpu", "", true});
  for (const auto* d : devices) t.columns.push_back({"GPU" + std::to_string(d->index()), ""});
  t.columns.push_back({"cpu_affinity", "CPU Affinity", true});
  t.columns.push_back({"numa_affinity", "NUMA Affinity", true});
  t.columns.push_back({"gpu_numa_id", "GPU NUMA ID", true});
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& aff = devices[i]->affinity();
    std::vector<out::Value> row{out::text("GPU" + std::to_string(devices[i]->index()))};
    for (std::size_t j = 0; j < devices.size(); ++j)
      row.push_back(out::text(gpu::abbreviation(matrix[i][j])));
    if (aff.cpu_affinity) {
      row.push_back(out::text(host::cpu_list(*aff.cpu_affinity)));
      auto nodes = host::numa_nodes_for(cpu, *aff.cpu_affinity);
      row.push_back(nodes.empty() ? out::na() : out::text(host::cpu_list(nodes)));
    } else {
      row.push_back(out::na());
      row.push_back(out::na());
    }
    row.push_back(out::from(aff.numa_node));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<std::string> nvlink_lines(const std::vector<gpu::Device*>& devices) {
  const auto summary = gpu::nvlink_summary(devices);
  std::vector<std::string> lines;
  for (const auto& p : summary.pairs) {
    lines.push_back(fmt::format("GPU{} <-> {}: {} link{} x {:.3f} GB/s = {:.0f} GB/s{}", p.gpu,
                                p.peer ? fmt::format("GPU{}", *p.peer) : std::string("NVSwitch"),
                                p.links, p.links == 1 ? "" : "s", p.gigabytes_per_s_per_link,
                                p.links * p.gigabytes_per_s_per_link,
                                p.version.empty() ? "" : fmt::format(" (NVLink {})", p.version)));
  }
  for (const auto& d : summary.down) {
    lines.push_back(fmt::format("GPU{}: NVLink {} {} {} down ({} of {} up)", d.gpu,
                                d.links.size() == 1 ? "link" : "links", fmt::join(d.links, ","),
                                d.links.size() == 1 ? "is" : "are", d.total - d.links.size(),
                                d.total));
  }
  return lines;
}

output::Table nvlink_table(const std::vector<gpu::Device*>& devices) {
  const auto summary = gpu::nvlink_summary(devices);
  out::Table t;
  t.columns = {{"nvlink_links_up", "NVLinks Up"},
               {"nvlink_links_down", "NVLinks Down", true},
               {"nvlink_gigabytes_per_s", "NVLink GB/s", false, "GB/s"},
               {"nvlink_version", "NVLink Version", true}};
  for (const auto* d : devices) {
    unsigned up = 0;
    double bandwidth = 0;
    std::string version;
    for (const auto& p : summary.pairs) {
      if (p.gpu != d->index() && p.peer != d->index()) continue;
      up += p.links;
      bandwidth += p.links * p.gigabytes_per_s_per_link;
      if (version.empty()) version = p.version;
    }
    std::string down;
    unsigned total = 0;
    for (const auto& l : summary.down) {
      if (l.gpu != d->index()) continue;
      down = fmt::format("{}", fmt::join(l.links, ","));
      total = l.total;
    }
    if (up == 0 && total == 0) {
      t.rows.push_back({out::na(), out::na(), out::na(), out::na()});
      continue;
    }
    t.rows.push_back({out::integer(up), out::text(down), out::number(bandwidth, "GB/s", 1),
                      version.empty() ? out::na() : out::text(version)});
  }
  return t;
}

}  // namespace gpuclk::views
