// `gpuclk` / `gpuclk status`: one row per GPU, then the findings worth acting on.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/journal_facts.h"
#include "control/consistency.h"
#include "gpu/status.h"
#include "rules/rule.h"
#include "rules/status_input.h"
#include "serve/client.h"
#include "views/findings.h"

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
               {"clocks_event_reasons.names", "Clock event reasons", true}};
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
        g.utilization ? output::percent(gpu::Reading<units::Ratio>(g.utilization->gpu))
                      : output::na(),
        // nvidia-smi's words for its key, as `query` gives them (one spelling per key).
        g.persistence_mode ? output::text(*g.persistence_mode ? "Enabled" : "Disabled")
                           : output::na(),
        output::mhz(g.app_sm_clock),
        output::mhz(g.app_memory_clock),
        // The names under query's names key, spaced as query and dmon space them; the hex
        // mask nvidia-smi calls clocks_event_reasons.active is query's.
        g.clock_reasons ? output::text(g.clock_reasons->names(" ")) : output::na(),
    });
  }
  return t;
}

// What gpuclk applied (its journal): a column, shown only when some GPU has an entry.
void add_applied_column(Context& ctx, const std::vector<gpu::StatusSnapshot>& gpus,
                        output::Table& table) {
  const auto journal = peek_journal(ctx);
  if (!journal || journal->clean()) return;
  bool any = false;
  std::vector<output::Value> column;
  for (const auto& g : gpus) {
    const auto* entry = journal->find(g.uuid);
    const auto text = entry ? control::applied_summary(*entry) : std::string();
    any = any || !text.empty();
    column.push_back(text.empty() ? output::text("-") : output::text(text));
  }
  if (!any) return;
  table.columns.push_back({"gpuclk.applied", "Set by gpuclk", true});
  for (std::size_t i = 0; i < table.rows.size(); ++i) table.rows[i].push_back(column[i]);
}

}  // namespace

int run_status(Context& ctx) {
  auto format = ctx.format();
  std::vector<gpu::StatusSnapshot> gpus;
  std::string simulated;  // the scenario, on the simulator
  if (auto* service = ctx.service()) {
    const auto reply = service->status();
    for (auto pos : ctx.select_from(reply.gpus)) gpus.push_back(reply.status.at(pos));
    simulated = reply.simulated;
    if (!reply.sim_time_note.empty()) simulated += ", " + reply.sim_time_note;
  } else {
    for (auto* d : ctx.selected()) gpus.push_back(gpu::take_status(*d));
    // With what its time does when that is not real time (a frozen node stays frozen for every
    // later command: the speed lives in the state file).
    if (ctx.simulated()) simulated = ctx.simulated_node();
  }
  // The rules engine over this one look; clock locks come from the journal (NVML cannot read
  // them).
  auto input = rules::status_input(gpus);
  add_journal_facts(ctx, input.gpus);
  const auto findings = rules::evaluate(input);
  auto printer = ctx.printer();
  auto table = status_table(gpus);
  add_applied_column(ctx, gpus, table);

  if (format.kind == output::Format::Kind::json) {
    // One document: the rows and the findings.
    output::Node root;
    auto& list = root.section("gpus", "GPUs", true);
    for (const auto& row : table.rows) {
      auto& n = list.section("gpu", "");
      for (std::size_t c = 0; c < row.size(); ++c) n.add(table.columns[c].key, "", row[c]);
    }
    root.children.push_back(views::findings_node(findings));
    printer->print_tree(root);
    return 0;
  }

  printer->print_table(table);
  if (format.kind == output::Format::Kind::table) {
    if (!simulated.empty()) std::cout << "(simulated node: " << simulated << ")\n";
    views::print_finding_lines(std::cout, findings, false);
  }
  return 0;
}

void add_status_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("status",
                                 "One row per GPU: clocks, power, temperature, clock event "
                                 "reasons, settings; then what is worth fixing (default)");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_status(ctx); }; });
}

}  // namespace gpuclk::cli
