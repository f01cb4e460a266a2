// `gpuclk` / `gpuclk status`: one row per GPU, then the findings worth acting on.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/status.h"

namespace gpuclk::cli {
namespace {

using output::Value;

std::string pstate_text(const gpu::Reading<int>& p) { return p ? "P" + std::to_string(*p) : "N/A"; }

output::Table status_table(const std::vector<gpu::StatusSnapshot>& gpus) {
  output::Table t;
  t.columns = {{"index", "GPU"},
               {"name", "Name", true},
               {"pstate", "Perf"},
               {"clocks.sm", "SM MHz"},
               {"clocks.max.sm", "max"},
               {"clocks.mem", "Mem MHz"},
               {"clocks.max.mem", "max"},
               {"power.draw", "Power W"},
               {"power.limit", "Limit W"},
               {"temperature.gpu", "Temp C"},
               {"utilization.gpu", "Util %"},
               {"persistence_mode", "Persist"},
               {"clocks.applications.graphics", "App SM"},
               {"clocks.applications.memory", "App Mem"},
               {"clocks_event_reasons.active", "Clock event reasons", true}};
  for (const auto& g : gpus) {
    t.rows.push_back({
        output::integer(g.index),
        output::text(g.name),
        g.pstate ? output::text(pstate_text(g.pstate)) : output::na(),
        output::mhz(g.sm_clock),
        output::mhz(g.sm_max),
        output::mhz(g.memory_clock),
        output::mhz(g.memory_max),
        output::watts(g.power_draw, 0),
        output::watts(g.power_limit, 0),
        output::celsius(g.temperature),
        g.utilization ? output::percent(gpu::Reading<units::Ratio>(g.utilization->gpu)) : output::na(),
        g.persistence_mode ? output::text(*g.persistence_mode ? "On" : "Off") : output::na(),
        output::mhz(g.app_sm_clock),
        output::mhz(g.app_memory_clock),
        g.clock_reasons ? output::text(g.clock_reasons->names()) : output::na(),
    });
  }
  return t;
}

output::Node findings_tree(const std::vector<gpu::Finding>& findings) {
  output::Node root;
  auto& list = root.section("findings", "Findings", true);
  for (const auto& f : findings) {
    auto& n = list.section("finding", "");
    n.add("severity", "Severity", output::text(f.severity == gpu::Finding::Severity::warning ? "warning" : "info"));
    std::string gpus;
    for (auto g : f.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    n.add("gpus", "GPUs", output::text(gpus));
    n.add("message", "Message", output::text(f.message));
    n.add("action", "Action", output::text(f.action));
  }
  return root;
}

}  // namespace

int run_status(Context& ctx) {
  auto format = ctx.format();
  std::vector<gpu::StatusSnapshot> gpus;
  for (auto* d : ctx.selected()) gpus.push_back(gpu::take_status(*d));
  auto findings = gpu::check_status(gpus);
  auto printer = ctx.printer();

  if (format.kind == output::Format::Kind::json) {
    // One document: the rows and the findings.
    output::Node root;
    auto table = status_table(gpus);
    auto& list = root.section("gpus", "GPUs", true);
    for (const auto& row : table.rows) {
      auto& n = list.section("gpu", "");
      for (std::size_t c = 0; c < row.size(); ++c) n.add(table.columns[c].key, "", row[c]);
    }
    root.children.push_back(findings_tree(findings).children.front());
    printer->print_tree(root);
    return 0;
  }

  printer->print_table(status_table(gpus));
  if (format.kind == output::Format::Kind::table) {
    if (ctx.simulated()) std::cout << "(simulated node: " << ctx.options.sim << ")\n";
    for (const auto& f : findings) {
      std::cout << (f.severity == gpu::Finding::Severity::warning ? "warning: " : "note: ") << f.message
                << "\n    -> " << f.action << '\n';
    }
  }
  return 0;
}

void add_status_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("status", "One row per GPU: clocks, power, temperature, clock event "
                                           "reasons, settings; then what is worth fixing (default)");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_status(ctx); }; });
}

}  // namespace gpuclk::cli
