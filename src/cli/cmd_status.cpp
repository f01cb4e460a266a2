// `gpuclk` / `gpuclk status`: one row per GPU, then the findings worth acting on.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/consistency.h"
#include "gpu/status.h"
#include "serve/protocol.h"

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
        g.utilization ? output::percent(gpu::Reading<units::Ratio>(g.utilization->gpu))
                      : output::na(),
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
    n.add("severity", "Severity",
          output::text(f.severity == gpu::Finding::Severity::warning ? "warning" : "info"));
    std::string gpus;
    for (auto g : f.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    n.add("gpus", "GPUs", output::text(gpus));
    n.add("message", "Message", output::text(f.message));
    n.add("action", "Action", output::text(f.action));
  }
  return root;
}

// What gpuclk applied (its journal): a column, shown only when some GPU has an entry, and a
// finding where the GPUs' clock locks differ (NVML cannot read locks; the other settings are
// compared by gpu::check_status from their readings).
void add_applied_settings(Context& ctx, const std::vector<gpu::StatusSnapshot>& gpus,
                          output::Table& table, std::vector<gpu::Finding>& findings) {
  const auto journal = peek_journal(ctx);
  if (!journal || journal->clean()) return;
  bool any = false;
  std::vector<output::Value> column;
  std::vector<control::GpuSettingsView> views;
  for (const auto& g : gpus) {
    const auto* entry = journal->find(g.uuid);
    const auto text = entry ? control::applied_summary(*entry) : std::string();
    any = any || !text.empty();
    column.push_back(text.empty() ? output::text("-") : output::text(text));
    control::GpuSettingsView view{g.index, g.uuid, g.name, {}};
    control::add_journal_locks(view.settings, *journal, g.uuid);
    views.push_back(std::move(view));
  }
  if (!any) return;
  table.columns.push_back({"gpuclk.applied", "Set by gpuclk", true});
  for (std::size_t i = 0; i < table.rows.size(); ++i) table.rows[i].push_back(column[i]);
  std::map<std::pair<control::Setting, std::string>, std::vector<unsigned>>
      odd;  // (setting, value) → GPUs
  std::map<std::pair<control::Setting, std::string>, std::string> majority;
  for (const auto& [uuid, diffs] : control::settings_that_differ(views)) {
    unsigned index = 0;
    for (const auto& v : views) {
      if (v.uuid == uuid) index = v.index;
    }
    for (const auto& d : diffs) {
      odd[{d.setting, d.value}].push_back(index);
      majority[{d.setting, d.value}] = d.majority;
    }
  }
  for (const auto& [key, indexes] : odd) {
    std::string list;
    for (auto i : indexes) list += (list.empty() ? "" : ",") + std::to_string(i);
    findings.push_back(
        {gpu::Finding::Severity::warning, indexes,
         "GPU " + list + ": " + std::string(control::label_of(key.first)) + " " + key.second +
             " (gpuclk journal) differ from the other GPUs' " + majority[key] +
             "; a multi-GPU job runs at the pace of its slowest GPU",
         std::string("gpuclk set --all ") +
             (key.first == control::Setting::locked_gpu_clocks ? "--lock-gpu-clocks"
                                                               : "--lock-memory-clocks") +
             " MIN[,MAX] (the same on every GPU), or gpuclk restore"});
  }
}

}  // namespace

int run_status(Context& ctx) {
  auto format = ctx.format();
  std::vector<gpu::StatusSnapshot> gpus;
  std::string simulated;  // the scenario, on the simulator
  if (auto reply = ctx.ask_service({{"request", "status"}})) {
    for (auto pos : ctx.select_from(reply->at("gpus")))
      gpus.push_back(serve::status_from_json(reply->at("status").at(pos)));
    simulated = reply->value("simulated", std::string());
  } else {
    for (auto* d : ctx.selected()) gpus.push_back(gpu::take_status(*d));
    if (ctx.simulated()) simulated = ctx.options.sim;
  }
  auto findings = gpu::check_status(gpus);
  auto printer = ctx.printer();
  auto table = status_table(gpus);
  add_applied_settings(ctx, gpus, table, findings);

  if (format.kind == output::Format::Kind::json) {
    // One document: the rows and the findings.
    output::Node root;
    auto& list = root.section("gpus", "GPUs", true);
    for (const auto& row : table.rows) {
      auto& n = list.section("gpu", "");
      for (std::size_t c = 0; c < row.size(); ++c) n.add(table.columns[c].key, "", row[c]);
    }
    root.children.push_back(findings_tree(findings).children.front());
    printer->print_tree(root);
    return 0;
  }

  printer->print_table(table);
  if (format.kind == output::Format::Kind::table) {
    if (!simulated.empty()) std::cout << "(simulated node: " << simulated << ")\n";
    for (const auto& f : findings) {
      std::cout << (f.severity == gpu::Finding::Severity::warning ? "warning: " : "note: ")
                << f.message << "\n    -> " << f.action << '\n';
    }
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
