// `gpuclk topo`: the GPU–GPU connection matrix and each GPU's CPU/NUMA affinity, with the
// legend nvidia-smi topo -m prints.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/topology.h"
#include "host/cpu.h"
#include "serve/client.h"
#include "views/topo.h"

namespace gpuclk::cli {
namespace {

namespace out = output;

}  // namespace

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
  auto t = reply ? reply->table : [&] {
    const auto cpu = ctx.host_cpu();
    cpus_from = cpu.source;
    return views::topo_table(ctx.selected(), cpu);
  }();
  // CSV and JSON carry each GPU's NVLinks as columns (the table shows them as lines below).
  if (ctx.format().kind != out::Format::Kind::table) {
    const auto links = reply ? reply->nvlink_columns : views::nvlink_table(ctx.selected());
    if (links.rows.size() == t.rows.size()) {
      t.columns.insert(t.columns.end(), links.columns.begin(), links.columns.end());
      for (std::size_t i = 0; i < t.rows.size(); ++i)
        t.rows[i].insert(t.rows[i].end(), links.rows[i].begin(), links.rows[i].end());
    }
  }
  ctx.printer()->print_table(t);
  if (ctx.format().kind == out::Format::Kind::table) {
    if (ctx.simulated() && !cpus_from.empty())
      std::cout << "\nCPU and NUMA affinity: CPUs and NUMA nodes of " << cpus_from << '\n';
    // NVLinks per GPU pair, as bandwidth (the matrix's NV# counts them), and links down.
    std::vector<std::string> lines;
    if (reply) {
      lines = reply->nvlink;
    } else {
      lines = views::nvlink_lines(ctx.selected());
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
