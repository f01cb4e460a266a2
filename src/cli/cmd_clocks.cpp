// `gpuclk clocks`: all of nvidia-smi -q -d CLOCK,PERFORMANCE,SUPPORTED_CLOCKS, per GPU, with a
// one-line meaning for each clock event reason and the supported clocks written compactly.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/consistency.h"
#include "gpu/clock_list.h"
#include "serve/client.h"
#include "serve/protocol.h"
#include "views/clocks.h"

namespace gpuclk::cli {
namespace {

using gpu::ClockDomain;
namespace out = output;

// What gpuclk applied to this GPU (its journal) and where the GPU differs from the others of its
// model; null when there is nothing to say.
struct AppliedView {
  const control::JournalEntry* entry = nullptr;
  std::vector<control::Difference> differences;
};

// The "Set by gpuclk" section, before the supported clocks (last: the longest).
void add_applied_section(out::Node& n, const AppliedView& view) {
  const auto at = std::find_if(n.children.begin(), n.children.end(),
                               [](const out::Node& c) { return c.key == "supported_clocks"; });
  out::Node& s = *n.children.insert(at, out::Node{"gpuclk", "Set by gpuclk", {}, {}, false});
  if (view.entry) {
    for (auto setting : control::kWriteOrder) {
      if (!view.entry->touched.count(setting)) continue;
      const auto& e = *view.entry;
      std::string value = e.pending.has(setting) ? control::describe(e.pending, setting) +
                                                       " (interrupted: run gpuclk restore)"
                          : e.applied.has(setting) ? control::describe(e.applied, setting)
                                                   : "N/A";
      value += " (original " + control::describe(e.original, setting) + ")";
      s.add(std::string(control::key_of(setting)), std::string(control::label_of(setting)),
            out::text(value));
    }
  }
  std::string differs;
  for (const auto& d : view.differences) {
    differs += fmt::format("{}{} {} (others: {})", differs.empty() ? "" : "; ",
                           control::label_of(d.setting), d.value, d.majority);
  }
  s.add("differs_from_other_gpus", "Differs From Other GPUs",
        out::text(differs.empty() ? "no" : differs));
}

int run_clocks(Context& ctx) {
  out::Node root;
  auto& gpus = root.section("gpus", "GPUs", true);
  // Every GPU of the node (the settings are compared with those -i leaves out too), and the
  // positions -i selects; from the service when one answers, else read here.
  std::vector<control::GpuSettingsView> gpu_views;
  std::vector<out::Node> trees;
  std::vector<std::size_t> selected;
  if (auto* service = ctx.service()) {
    auto view = service->clocks_view();
    for (std::size_t i = 0; i < view.gpus.size(); ++i) {
      const auto& key = view.gpus[i];
      auto& row = view.rows.at(i);
      gpu_views.push_back({key.index, key.uuid, row.name, row.settings});
      trees.push_back(std::move(row.tree));
    }
    selected = ctx.select_from(view.gpus);
  } else {
    const auto chosen = ctx.selected();
    const auto all = ctx.devices().all();
    for (const auto* d : all) {
      gpu_views.push_back({d->index(), d->uuid(), d->name(), control::read_settings(*d)});
      const bool wanted = std::find(chosen.begin(), chosen.end(), d) != chosen.end();
      trees.push_back(wanted ? views::clocks_tree(*d, gpu_views.back().settings) : out::Node{});
    }
    for (const auto* d : chosen) {
      selected.push_back(
          static_cast<std::size_t>(std::find(all.begin(), all.end(), d) - all.begin()));
    }
  }
  // The "Set by gpuclk" section appears only where gpuclk changed something or settings differ.
  const auto journal = peek_journal(ctx).value_or(control::Journal{});
  for (auto& v : gpu_views) control::add_journal_locks(v.settings, journal, v.uuid);
  auto differences = control::settings_that_differ(gpu_views);
  for (auto pos : selected) {
    const auto& uuid = gpu_views[pos].uuid;
    AppliedView view{journal.find(uuid), differences[uuid]};
    if (view.entry || !view.differences.empty()) add_applied_section(trees[pos], view);
    gpus.children.push_back(std::move(trees[pos]));
  }
  // Tables and CSV read better without the list wrapper; JSON keeps it.
  if (ctx.format().kind == out::Format::Kind::json)
    ctx.printer()->print_tree(root);
  else
    ctx.printer()->print_tree(gpus);
  return 0;
}

}  // namespace

void add_clocks_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("clocks",
                                 "Clocks in detail: current, application, max, boost, P-state "
                                 "range, clock event reasons and counters, supported clocks");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_clocks(ctx); }; });
}

}  // namespace gpuclk::cli
