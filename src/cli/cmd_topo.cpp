// `gpuclk topo`: the GPU–GPU connection matrix and each GPU's CPU/NUMA affinity, with the
// legend nvidia-smi topo -m prints.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/service_views.h"
#include "gpu/topology.h"
#include "host/cpu.h"
#include "serve/client.h"

namespace gpuclk::cli {
namespace {

namespace out = output;

}  // namespace

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

namespace {

int run_topo(Context& ctx) {
  // The matrix depends on which GPUs it spans (NVLinks to GPUs outside it count as switch
  // links), so the service's whole-node table serves only a command without -i.
  std::optional<serve::TopoView> reply;
  if (!ctx.selection_given()) {
    if (auto* service = ctx.service()) reply = service->topo_view();
  }
  // Where the affinity's CPUs and NUMA nodes are (the service says it for its table).
  std::string cpus_from = reply ? reply->cpus_from : "";
  const auto t = reply ? reply->table : [&] {
    const auto cpu = ctx.host_cpu();
    cpus_from = cpu.source;
    return topo_table(ctx.selected(), cpu);
  }();
  ctx.printer()->print_table(t);
  if (ctx.format().kind == out::Format::Kind::table) {
    if (ctx.simulated() && !cpus_from.empty())
      std::cout << "\nCPU and NUMA affinity: CPUs and NUMA nodes of " << cpus_from << '\n';
    // NVLinks per GPU pair, as bandwidth (the matrix's NV# counts them), and links down.
    std::vector<std::string> lines;
    if (reply) {
      lines = reply->nvlink;
    } else {
      lines = nvlink_lines(ctx.selected());
    }
    if (!lines.empty()) {
      std::cout << "\nNVLink (per direction):\n";
      for (const auto& l : lines) std::cout << "  " << l << '\n';
    }
    std::cout << "\nLegend:\n\n";
    for (const auto& [abbr, meaning] : gpu::topology_legend()) {
      std::cout << "  " << abbr << std::string(5 - std::min<std::size_t>(abbr.size(), 4), ' ')
                << "= " << meaning << '\n';
    }
  }
  return 0;
}

}  // namespace

void add_topo_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("topo",
                                 "GPU-GPU connections (NVLink, PCIe path) and CPU/NUMA affinity "
                                 "(as nvidia-smi topo -m)");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_topo(ctx); }; });
}

}  // namespace gpuclk::cli
