// `gpuclk info`: the inventory — CPU, driver, and each GPU's architecture, limits, peaks, link.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/arch.h"
#include "gpu/simulator.h"
#include "host/cpu.h"
#include "serve/client.h"
#include "views/info.h"

namespace gpuclk::cli {
namespace {

using gpu::ClockDomain;
namespace out = output;

}  // namespace

namespace {

int run_info(Context& ctx) {
  out::Node root;
  if (auto* service = ctx.service()) {
    auto view = service->info_view();
    root.children.push_back(std::move(view.host));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (auto pos : ctx.select_from(view.gpus)) gpus.children.push_back(view.rows.at(pos));
  } else {
    const auto cpu = ctx.host_cpu();
    root.children.push_back(views::info_host_tree(ctx.devices(), cpu));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (const auto* d : ctx.selected()) gpus.children.push_back(views::info_gpu_tree(*d, cpu));
  }
  auto& gpus = root.children.back();
  if (ctx.format().kind == out::Format::Kind::json) {
    ctx.printer()->print_tree(root);
  } else {
    // Human and CSV: the host, then each GPU as its own top-level block.
    out::Node flat;
    flat.children.push_back(root.children.front());
    for (auto& g : gpus.children) flat.children.push_back(g);
    ctx.printer()->print_tree(flat);
  }
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, Context& ctx) {
  auto* sub =
      app.add_subcommand("info",
                         "Inventory: CPU, driver, and per GPU the architecture, SMs, "
                         "memory, max clocks, peak FLOP/s per data type, PCIe link, affinity");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_info(ctx); }; });
}

}  // namespace gpuclk::cli
